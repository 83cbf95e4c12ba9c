package initrd

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
)

// packFileSets are the contents round-tripped through Pack and WriteNewc.
func packFileSets() map[string]Files {
	random := make([]byte, 64<<10)
	rand.New(rand.NewSource(1)).Read(random)
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	many := Files{}
	for i := 0; i < 300; i++ {
		many[fmt.Sprintf("d%d/sub%d/f%d", i%7, i%3, i)] = bytes.Repeat([]byte{byte(i)}, i)
	}
	return map[string]Files{
		"empty":          {},
		"ignition":       filesOf(IgnitionPath, "{\"ignition\": {\"version\": \"3.0.0\"}\n"),
		"empty ignition": {IgnitionPath: {}},
		"ignition and network": filesOf(IgnitionPath, `{"ignition":{"version":"3.4.0"}}`,
			NetworkDir+"/eth0.nmconnection", "[connection]\nid=eth0\n",
			NetworkDir+"/bond0.nmconnection", "[connection]\nid=bond0\n"),
		"binary":    {"bin/all-bytes": allBytes, "bin/random": random, "odd": []byte("123")},
		"many":      many,
		"deep path": filesOf("a/b/c/d/e/f/g/h", "deep"),
	}
}

func TestPackRoundTrip(t *testing.T) {
	for name, files := range packFileSets() {
		t.Run(name, func(t *testing.T) {
			packed := packOf(t, files)
			got, err := Read(bytes.NewReader(packed), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := equalFiles(got, files); diff != "" {
				t.Errorf("Pack then Read: %s", diff)
			}
			got, err = Read(bytes.NewReader(newcOf(t, files)), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := equalFiles(got, files); diff != "" {
				t.Errorf("WriteNewc then Read: %s", diff)
			}
		})
	}
}

func TestPackIsDeterministic(t *testing.T) {
	for name, files := range packFileSets() {
		copied := Files{}
		paths := files.Paths()
		for i := len(paths) - 1; i >= 0; i-- { // another insertion order
			copied[paths[i]] = append([]byte(nil), files[paths[i]]...)
		}
		if !bytes.Equal(packOf(t, files), packOf(t, copied)) {
			t.Errorf("%s: two Packs of the same files differ", name)
		}
	}
}

func TestPackStreamFormat(t *testing.T) {
	for name, files := range packFileSets() {
		packed := packOf(t, files)
		if !bytes.HasPrefix(packed, []byte("\xfd7zXZ\x00")) {
			t.Errorf("%s: no xz magic: % x", name, packed[:6])
		}
		// Stream flags: 00 01 is the CRC32 check, the one the kernel accepts.
		if !bytes.Equal(packed[6:8], []byte{0, 1}) {
			t.Errorf("%s: stream flags % x, want 00 01 (CRC32)", name, packed[6:8])
		}
		if !bytes.HasSuffix(packed, []byte{0, 1, 'Y', 'Z'}) {
			t.Errorf("%s: footer ends % x, want the CRC32 flags and YZ", name, packed[len(packed)-4:])
		}
		if len(packed)%4 != 0 {
			t.Errorf("%s: %d bytes, not a multiple of 4", name, len(packed))
		}
	}
}

// An embed area is the payload followed by zero fill; reading the whole area gives the files.
func TestPackInZeroFilledArea(t *testing.T) {
	const areaLen = 256 << 10
	files := packFileSets()["ignition and network"]
	area := make([]byte, areaLen)
	copy(area, packOf(t, files))
	got, err := Read(bytes.NewReader(area), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := equalFiles(got, files); diff != "" {
		t.Error(diff)
	}
}

// ignitionLike returns an Ignition config of about n bytes shaped like the bootstrap-in-place
// one: many files, as base64 data URLs of YAML manifests, some gzipped.
func ignitionLike(n int) []byte {
	r := rand.New(rand.NewSource(2))
	type file struct {
		Path     string            `json:"path"`
		Mode     int               `json:"mode"`
		Contents map[string]string `json:"contents"`
	}
	var files []file
	size := 0
	for i := 0; size < n; i++ {
		var manifest bytes.Buffer
		fmt.Fprintf(&manifest, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: openshift-%d\ndata:\n", i, r.Intn(50))
		for j := 0; j < 20+r.Intn(40); j++ {
			fmt.Fprintf(&manifest, "  key-%d: \"%x\"\n", j, r.Int63())
		}
		contents := map[string]string{}
		if i%3 == 0 {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(manifest.Bytes())
			zw.Close()
			contents["compression"] = "gzip"
			contents["source"] = "data:;base64," + base64.StdEncoding.EncodeToString(gz.Bytes())
		} else {
			contents["source"] = "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(manifest.Bytes())
		}
		f := file{Path: fmt.Sprintf("/opt/openshift/manifests/m%d.yaml", i), Mode: 0o644, Contents: contents}
		files = append(files, f)
		size += len(contents["source"]) + 80
	}
	b, err := json.Marshal(map[string]any{"ignition": map[string]string{"version": "3.2.0"}, "storage": map[string]any{"files": files}})
	if err != nil {
		panic(err)
	}
	return b
}

// The stock embed area is 256 KiB; Ignition configs well above that must still fit.
func TestPackFitsLargeIgnition(t *testing.T) {
	config := ignitionLike(512 << 10)
	packed := packOf(t, Files{IgnitionPath: config})
	t.Logf("%d bytes of Ignition pack to %d bytes", len(config), len(packed))
	if len(packed) > 256<<10 {
		t.Errorf("%d bytes of Ignition pack to %d bytes, more than a 256 KiB area", len(config), len(packed))
	}
}

// TestDictCapFitsTheArchive: the dictionary covers the whole archive, so compression is as
// good as with a larger one, but no larger than needed: every decoder, the kernel's
// included, allocates it.
func TestDictCapFitsTheArchive(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 64 << 10}, {100, 64 << 10}, {64 << 10, 64 << 10}, {64<<10 + 1, 128 << 10},
		{300000, 512 << 10}, {5 << 20, 8 << 20}, {100 << 20, 8 << 20},
	} {
		if got := dictCap(c.n); got != c.want {
			t.Errorf("dictCap(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
