package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"
)

// The candidate goldens of spec section 8 for `iso extract minimal-iso`, without and with
// --rootfs-url https://example.com/rootfs.
var minimalGoldens = map[string][2]string{
	"embed-areas-2021-12.iso": {"6158ad215448979f51c49e418efe02c04020467adeb99530b33b17c967f5cc43",
		"2c58aa8c76cdcb3361eac9766f5be72a1139c8d909475535ed4c2c89618c7923"},
	"embed-areas-2023-07.x86_64.iso": {"544c32c296a618d6eb2f6ff228abc2dbc2beb41bded341dcc43812b739e0538b",
		"ff74a08a251b1cd2a7923772b04bfed5be73e9b38de935a31873e7b0457d54d5"},
	"embed-areas-2023-07.s390x.iso": {"53413c1ecec58c97a07f214d476cb7cec9c70da964c749f72d6133c59005e2cf",
		"89745926e046a76d8b94fe7a74c2e3a7e3a4f2da9a6129f0d951b9a7c802f631"},
}

const exampleRootfsURL = "https://example.com/rootfs"

// isoKargs returns the current kernel arguments of an ISO.
func isoKargs(t *testing.T, iso string) string {
	t.Helper()
	l := openLiveISO(t, iso)
	k, err := l.CurrentKargs()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestMinimalExtract follows iso-extract-minimal-iso.sh on every fixture with miniso.dat.
func TestMinimalExtract(t *testing.T) {
	for name, golden := range minimalGoldens {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			dir := t.TempDir()
			if !strings.Contains(isoKargs(t, iso), "coreos.liveiso=") {
				t.Fatal("the input's kargs lack coreos.liveiso=")
			}
			out := filepath.Join(dir, "minimal.iso")
			mustSno(t, nil, "minimal", iso, out)
			if got := fileSHA(t, out); got != golden[0] {
				t.Errorf("SHA-256 %s, want the spec's candidate golden %s", got, golden[0])
			}
			if k := isoKargs(t, out); strings.Contains(k, "coreos.liveiso") {
				t.Errorf("output kargs %q still hold coreos.liveiso", k)
			}
			if stream := mustSno(t, nil, "minimal", iso, "-"); bytesSHA(stream) != golden[0] {
				t.Error("standard output differs from the file output")
			}

			// --output-rootfs leaves the minimal ISO as it is and writes the ISO's rootfs.img.
			withRootfs, rootfs := filepath.Join(dir, "with-rootfs.iso"), filepath.Join(dir, "rootfs.img")
			mustSno(t, nil, "minimal", "--output-rootfs", rootfs, iso, withRootfs)
			if fileSHA(t, withRootfs) != golden[0] {
				t.Error("--output-rootfs changed the minimal ISO")
			}
			want := isoFile(t, iso, "IMAGES/PXEBOOT/ROOTFS.IMG")
			if got, err := os.ReadFile(rootfs); err != nil || !bytes.Equal(got, want) {
				t.Errorf("rootfs %q, want the ISO's %q (%v)", got, want, err)
			}
			stdoutRootfs := filepath.Join(dir, "rootfs2.img")
			if stream := mustSno(t, nil, "minimal", "--output-rootfs", stdoutRootfs, iso, "-"); bytesSHA(stream) != golden[0] || fileSHA(t, stdoutRootfs) != bytesSHA(want) {
				t.Error("--output-rootfs with standard output differs")
			}

			withURL := filepath.Join(dir, "url.iso")
			mustSno(t, nil, "minimal", "--rootfs-url", exampleRootfsURL, iso, withURL)
			if got := fileSHA(t, withURL); got != golden[1] {
				t.Errorf("--rootfs-url: SHA-256 %s, want the spec's candidate golden %s", got, golden[1])
			}
			if k := isoKargs(t, withURL); !strings.Contains(k, "coreos.live.rootfs_url="+exampleRootfsURL) {
				t.Errorf("kargs %q lack the rootfs URL", k)
			}
			if stream := mustSno(t, nil, "minimal", "--rootfs-url", exampleRootfsURL, iso, "-"); bytesSHA(stream) != golden[1] {
				t.Error("--rootfs-url: standard output differs from the file output")
			}

			wantFailure(t, sno(t, nil, "minimal", iso, out), "file exists")
			wantFailure(t, sno(t, nil, "minimal", "--output-rootfs", rootfs, iso, filepath.Join(dir, "new.iso")), "file exists")
			if _, err := os.Stat(filepath.Join(dir, "new.iso")); err == nil {
				t.Error("the ISO was written although the rootfs output was refused")
			}
			mustSno(t, nil, "minimal", "--force", iso, out)
		})
	}
}

func TestMinimalRefuses(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	raw, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.iso")
	if err := os.WriteFile(corrupt, bytes.ReplaceAll(raw, []byte("coreos.liveiso"), []byte("codeos.liveiso")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.iso")
	wantFailure(t, sno(t, nil, "minimal", corrupt, out), "wrong final digest")
	wantFailure(t, sno(t, nil, "minimal", corrupt, "-"), "wrong final digest")

	kargs := filepath.Join(dir, "kargs.iso")
	mustSno(t, nil, "kargs", "modify", "-a", "foo=bar", "-o", kargs, iso)
	wantFailure(t, sno(t, nil, "minimal", kargs, out), "cannot operate on ISO with embedded customizations", "reset")
	config := writeFile(t, filepath.Join(dir, "config.ign"), `{"ignition":{"version":"3.2.0"}}`)
	embedded := filepath.Join(dir, "embedded.iso")
	mustSno(t, nil, "ignition", "embed", "-i", config, "-o", embedded, iso)
	wantFailure(t, sno(t, nil, "minimal", embedded, out), "cannot operate on ISO with embedded customizations")
	mustSno(t, nil, "reset", embedded)
	mustSno(t, nil, "minimal", embedded, out)
	if fileSHA(t, out) != minimalGoldens["embed-areas-2023-07.x86_64.iso"][0] {
		t.Error("after reset, the minimal ISO differs from the pristine ISO's")
	}

	wantFailure(t, sno(t, nil, "minimal", "--rootfs-url", "http://a/b c", iso, filepath.Join(dir, "ws.iso")), "forbidden whitespace")
	r := sno(t, nil, "minimal", iso)
	if r.code != 2 {
		t.Errorf("one argument: exit %d, want 2 (usage)", r.code)
	}
	if left := dirEntries(t, dir); len(left) != 5 {
		t.Errorf("the directory holds %v: a failed run left something behind", left)
	}
}

// TestMinimalWithoutMiniso goes further than coreos-installer: ISOs without miniso.dat are
// rebuilt, with their kernel arguments areas (kargs.json or the coreKarg header) still valid.
func TestMinimalWithoutMiniso(t *testing.T) {
	for _, name := range []string{"embed-areas-2021-01.iso", "embed-areas-2020-09.iso"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "minimal.iso")
			mustSno(t, nil, "minimal", "--rootfs-url", exampleRootfsURL, fixtures.File(t, name), out)
			inspect := string(mustSno(t, nil, "inspect", out))
			if strings.Contains(inspect, "coreos.liveiso") {
				t.Errorf("inspect shows coreos.liveiso:\n%s", inspect)
			}
			if name == "embed-areas-2021-01.iso" && !strings.Contains(isoKargs(t, out), "coreos.live.rootfs_url="+exampleRootfsURL) {
				t.Errorf("kargs lack the rootfs URL:\n%s", inspect)
			}
			// The rebuilt areas take later edits.
			if name == "embed-areas-2021-01.iso" {
				mustSno(t, nil, "kargs", "modify", "-a", "foo", "-o", out+".2", out)
			}
		})
	}
}

func TestBuildMinimal(t *testing.T) {
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	for _, tc := range []struct {
		name, iso string
		args      []string
	}{
		{"miniso.dat, flags", "embed-areas-2023-07.x86_64.iso", []string{"--minimal", "--rootfs-url", exampleRootfsURL}},
		{"miniso.dat, sno.yaml", "embed-areas-2023-07.x86_64.iso", []string{"--config", writeFile(t, filepath.Join(dir, "sno.yaml"),
			"coreOSInstallation:\n  installationDisk: /dev/vda\noutput:\n  kind: minimal\n  rootfsURL: "+exampleRootfsURL+"\n")}},
		{"rebuilt", "embed-areas-2021-01.iso", []string{"--minimal", "--rootfs-url", exampleRootfsURL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sno.iso")
			args := append([]string{"build", "--iso", fixtures.File(t, tc.iso), "--ignition", ign, "-o", out}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "--config") {
				args = append(args, "--installation-disk", "/dev/vda")
			}
			r := sno(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(string(r.stderr), "relies on DHCP") {
				t.Errorf("no warning about the network the initramfs needs:\n%s", r.stderr)
			}
			if k := isoKargs(t, out); !strings.Contains(k, "coreos.live.rootfs_url="+exampleRootfsURL) || strings.Contains(k, "coreos.liveiso") {
				t.Errorf("kargs %q", k)
			}
			var info node.Report
			if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &info); err != nil {
				t.Fatal(err)
			}
			if info.Installation == nil || info.Installation.Disk != "/dev/vda" {
				t.Errorf("the embedded config installs to %+v, want /dev/vda", info.Installation)
			}
			l := openLiveISO(t, out)
			if _, _, err := l.Locate("IMAGES/PXEBOOT/ROOTFS.IMG"); err == nil {
				t.Error("the minimal ISO still has rootfs.img")
			}
		})
	}
	r := sno(t, nil, "build", "--iso", fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), "--ignition", ign,
		"--installation-disk", "/dev/vda", "--minimal", "--live-karg-append", "ip=dhcp", "-o", filepath.Join(dir, "ip.iso"))
	if r.code != 0 || strings.Contains(string(r.stderr), "relies on DHCP") {
		t.Errorf("with ip= in the live kargs: exit %d, stderr %s", r.code, r.stderr)
	}
	wantFailure(t, sno(t, nil, "build", "--iso", fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), "--ignition", ign,
		"--installation-disk", "/dev/vda", "--rootfs-url", exampleRootfsURL, "-o", filepath.Join(dir, "x.iso")), "--minimal")
}

func TestBuildGrowEmbedArea(t *testing.T) {
	dir := t.TempDir()
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	big := bipConfig(t, dir, 1000000)
	out := filepath.Join(dir, "grown.iso")
	wantFailure(t, sno(t, nil, "build", "--iso", iso, "--ignition", big, "--installation-disk", "/dev/vda", "-o", out), "too large", "--grow-embed-area")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", big, "--installation-disk", "/dev/vda", "--grow-embed-area", "-o", out)
	l := openLiveISO(t, out)
	files, err := l.Payload()
	if err != nil {
		t.Fatal(err)
	}
	area, _ := l.IgnitionAreaBytes()
	used := len(bytes.TrimRight(area, "\x00"))
	if l.IgnitionArea().Length <= 262144 || used*2 > len(area) {
		t.Errorf("area of %d bytes with %d used: want a larger area with at least half free", l.IgnitionArea().Length, used)
	}
	if len(files["config.ign"]) < 1000000 {
		t.Errorf("embedded config is %d bytes", len(files["config.ign"]))
	}
	// The area stays editable: the config can be replaced in place.
	mustSno(t, nil, "ignition", "embed", "-f", "-i", bipConfig(t, t.TempDir(), 0), out)
}

// bootRootfsURL is never fetched: the look-alike's /init only reports the command line.
const bootRootfsURL = "http://192.0.2.1/rhcos-live-rootfs.img"

var minimalBootKargs = []string{"ignition.firstboot ignition.platform.id=metal", "coreos.live.rootfs_url=" + bootRootfsURL}

// minimalBootImage makes a minimal ISO of the look-alike, from its miniso.dat or rebuilt,
// and embeds bootConfig into it.
func minimalBootImage(rebuild bool) func(t *testing.T, pristine, dir string) string {
	return func(t *testing.T, pristine, dir string) string {
		minimal := filepath.Join(dir, "minimal.iso")
		args := []string{"minimal", "--rootfs-url", bootRootfsURL, pristine, minimal}
		if rebuild {
			args = append([]string{"minimal", "--rebuild"}, args[1:]...)
		}
		mustSno(t, nil, args...)
		config := writeFile(t, filepath.Join(dir, "config.ign"), string(bootConfig))
		mustSno(t, nil, "ignition", "embed", "-i", config, minimal)
		return minimal
	}
}

// grownBootConfig is a valid 1 MB Ignition config that xz cannot shrink below the 256 KiB
// area: a file of random bytes.
var grownBootConfig = func() []byte {
	random := make([]byte, 750000)
	rng := rand.New(rand.NewPCG(6, 6))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/sno-boot-test","contents":{"source":"data:;base64,` +
		base64.StdEncoding.EncodeToString(random) + `"}}]}}` + "\n")
}()

// grownBootImage builds the look-alike with the 1 MB config and --grow-embed-area.
func grownBootImage(t *testing.T, pristine, dir string) string {
	config := writeFile(t, filepath.Join(dir, "big.ign"), string(grownBootConfig))
	out := filepath.Join(dir, "grown.iso")
	mustSno(t, nil, "build", "--iso", pristine, "--ignition", config, "--allow-any-ignition", "--grow-embed-area", "-o", out)
	return out
}
