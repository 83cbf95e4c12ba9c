package initrd

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
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

// TestPackDictionaryFitsTheArchive reads the dictionary size from Pack's streams with xz
// itself (xz --list) and checks what it is chosen for: it holds the whole archive (up to the
// 8 MiB of xz's default preset), so compression is within 0.5% of the largest dictionary's;
// it is the smallest power of two from 64 KiB that does, because every decoder, the kernel's
// included, allocates it; and xz decodes the stream within the memory that dictionary needs.
func TestPackDictionaryFitsTheArchive(t *testing.T) {
	xzTool := testenv.Tool(t, "xz", "xz-utils")
	for _, n := range []int{100, 60 << 10, 70 << 10, 300000, 9 << 20} {
		files := Files{IgnitionPath: ignitionLike(n)}
		archive := newcOf(t, files)
		packed := packOf(t, files)
		path := filepath.Join(t.TempDir(), "packed.xz")
		if err := os.WriteFile(path, packed, 0o600); err != nil {
			t.Fatal(err)
		}
		dict, memory := xzListDictionary(t, xzTool, path)
		a := len(archive)
		switch {
		case dict < min(a, 8<<20):
			t.Errorf("archive of %d bytes: dictionary %d bytes does not hold it", a, dict)
		case dict&(dict-1) != 0 || dict < 64<<10:
			t.Errorf("archive of %d bytes: dictionary %d bytes is not a power of two from 64 KiB", a, dict)
		case dict > 64<<10 && dict/2 >= a:
			t.Errorf("archive of %d bytes: dictionary %d bytes, half of it would hold the archive", a, dict)
		case dict > 8<<20:
			t.Errorf("archive of %d bytes: dictionary %d bytes, above xz's default 8 MiB", a, dict)
		}
		limit := fmt.Sprintf("--memlimit-decompress=%d", memory)
		if out := run(t, "", packed, "xz", "-dc", "--single-stream", limit); !bytes.Equal(out, archive) {
			t.Errorf("archive of %d bytes: xz -dc %s gives %d other bytes", a, limit, len(out))
		}
		// The largest dictionary compresses no better (go-xz's match finder differs by a few
		// bytes in a thousand with the dictionary size).
		if dict == 8<<20 {
			continue
		}
		var largest bytes.Buffer
		w, err := xz.WriterConfig{DictCap: 8 << 20, CheckSum: xz.CRC32, Matcher: lzma.HashTable4}.NewWriter(&largest)
		if err == nil {
			_, err = w.Write(archive)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(packed) > largest.Len()+largest.Len()/200 {
			t.Errorf("archive of %d bytes: packed to %d bytes, %d with an 8 MiB dictionary", a, len(packed), largest.Len())
		}
	}
}

// xzListDictionary returns the LZMA2 dictionary size of the one block of the xz file at
// path, and the memory xz needs to decode it, as `xz --robot --list -vv` reports them.
func xzListDictionary(t *testing.T, xzTool, path string) (dict, memory int) {
	t.Helper()
	out, err := exec.Command(xzTool, "--robot", "--list", "-vv", path).Output()
	if err != nil {
		t.Fatalf("xz --list: %v", err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		fields := strings.Split(line, "\t")
		if fields[0] != "block" {
			continue
		}
		// The last two columns are the memory needed and the filter chain.
		memory, err = strconv.Atoi(fields[len(fields)-2])
		if err != nil {
			t.Fatalf("xz --list block line %q: %v", line, err)
		}
		_, size, ok := strings.Cut(fields[len(fields)-1], "dict=")
		size, _, _ = strings.Cut(size, ",")
		unit := map[string]int{"KiB": 1 << 10, "MiB": 1 << 20}[size[max(0, len(size)-3):]]
		value, err := strconv.Atoi(size[:max(0, len(size)-3)])
		if !ok || unit == 0 || err != nil {
			t.Fatalf("xz --list block line %q: no dictionary size", line)
		}
		return value * unit, memory
	}
	t.Fatalf("xz --list shows no block:\n%s", out)
	return 0, 0
}
