package serve

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/isobuilder"
)

func TestParseVolumeDate(t *testing.T) {
	tests := map[string]time.Time{
		"2026110108000000\x00":                    time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC),
		"2026110108000050\x08":                    time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC),  // UTC+2, hundredths dropped
		"1999123123595900" + string([]byte{0xfc}): time.Date(2000, 1, 1, 0, 59, 59, 0, time.UTC), // UTC-1
	}
	for in, want := range tests {
		if got, ok := parseVolumeDate([]byte(in)); !ok || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"0000000000000000\x00", "2026130108000000\x00", "2026 10108000000\x00", "+026110108000000\x00", "202611010800000\x00", "2026110108000000\x7f"} {
		if got, ok := parseVolumeDate([]byte(bad)); ok {
			t.Errorf("%q parsed as %v", bad, got)
		}
	}
}

// One ETag per content whatever the source: the same ISO served from a local file and from
// an HTTP origin gives every artifact the same validators, so a download resumes with If-Range
// on a replica of the other kind; a different ISO gives different ones.
func TestValidatorsSameFromFileAndOrigin(t *testing.T) {
	// Every artifact but the node's initrd.img: the fixtures' initramfs is a placeholder that
	// cannot be customized; its ETag is made from the same ISO identity as the others'.
	paths := []string{"/a.iso", "/a-minimal.iso", "/a/vmlinuz", "/a/rootfs.img", "/a/boot.ipxe", "/rootfs.img"}
	baseURL := func(c *testSetup) { c.BaseURL = "http://192.0.2.1:8080" }
	validators := func(h *harness) map[string][2]string {
		t.Helper()
		got := map[string][2]string{}
		for _, p := range paths {
			resp, body := h.get(p, "Range: bytes=0-0")
			if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("ETag") == "" {
				t.Fatalf("GET %s: %d, ETag %q: %s\n%s", p, resp.StatusCode, resp.Header.Get("ETag"), body, h.log.String())
			}
			got[p] = [2]string{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
		}
		return got
	}
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := map[string]string{"a": configA}
	file := newHarness(t, iso, nodes, baseURL)
	store := newObjectStore(t, iso)
	// Replicas share the nodes directory, and so its secret (boot.ipxe names the tokens).
	replica := func(iso string) func(*testSetup) {
		return func(c *testSetup) {
			baseURL(c)
			c.ISO, c.NodesDir = iso, file.nodes
		}
	}
	byURL := newHarness(t, iso, nil, replica(store.url()))
	fromFile, fromOrigin := validators(file), validators(byURL)
	for _, p := range paths {
		if fromFile[p] != fromOrigin[p] {
			t.Errorf("%s: ETag, Last-Modified %q from the file, %q from the origin", p, fromFile[p], fromOrigin[p])
		}
	}
	// Resuming on the other kind of replica continues the download.
	full, want := file.get("/a.iso")
	resumed, part := byURL.get("/a.iso", "Range: bytes=1000-", "If-Range: "+full.Header.Get("ETag"))
	if resumed.StatusCode != http.StatusPartialContent || !bytes.Equal(part, want[1000:]) {
		t.Errorf("resuming from the file's replica on the origin's: %d, %d bytes", resumed.StatusCode, len(part))
	}

	// The same ISO under another origin ETag is the same content; another ISO is not.
	store.set(iso, `"another-upload"`, nil)
	reuploaded := validators(newHarness(t, iso, nil, replica(store.url())))
	if reuploaded["/a.iso"][0] != fromFile["/a.iso"][0] {
		t.Errorf("the same bytes under another origin ETag: %s, want %s", reuploaded["/a.iso"][0], fromFile["/a.iso"][0])
	}
	otherISO := fixtures.File(t, "embed-areas-2021-12.iso")
	otherH := newHarness(t, otherISO, nil, replica(otherISO))
	other := validators(otherH)
	for _, p := range paths {
		// boot.ipxe is a script naming the URLs and kernel arguments: the same text for both
		// ISOs may have the same ETag.
		if p == "/a/boot.ipxe" {
			_, mine := file.get(p)
			if _, theirs := otherH.get(p); !bytes.Equal(mine, theirs) && other[p][0] == fromFile[p][0] {
				t.Errorf("%s: ETag %s for two different scripts", p, other[p][0])
			}
			continue
		}
		if other[p][0] == fromFile[p][0] {
			t.Errorf("%s: ETag %s for two different ISOs", p, other[p][0])
		}
	}
}

// What tells two builds apart changes the identity: the volume's dates, the minimal ISO's
// digest in miniso.dat, the rootfs's squashfs tables at its end.
func TestISOIdentityTellsBuildsApart(t *testing.T) {
	src := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	identity := func(data []byte) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "x.iso")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		iso, err := isobuilder.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer iso.Close()
		id, err := isoIdentity(iso)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	iso, err := isobuilder.Open(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	minisoOff, minisoLen, ok := iso.MinisoExtent()
	if !ok {
		t.Fatal("the fixture has no miniso.dat")
	}
	rootfs, err := iso.PXEFile("rootfs.img")
	iso.Close()
	if err != nil {
		t.Fatal(err)
	}
	original := identity(src)
	for what, off := range map[string]int64{
		"the volume's modification date": 16*isobuilder.SectorSize + 830 + 3,
		"miniso.dat":                     minisoOff + minisoLen/8,
		"the rootfs's last byte":         rootfs.Offset() + int64(rootfs.Length) - 1,
	} {
		changed := bytes.Clone(src)
		changed[off] ^= 1
		if identity(changed) == original {
			t.Errorf("a byte changed in %s (at %d) leaves the identity as it was", what, off)
		}
	}
}
