package isobuilder

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sparseISO is an ISO image described by a few sector patches over zeros, so that fuzz inputs
// stay small while LBAs, lengths and the image size keep their real values.
type sparseISO struct {
	size    int64
	patches []sparsePatch
}

type sparsePatch struct {
	off  int64
	data []byte
}

// maxFuzzSectors caps the image size, so that each input runs in milliseconds even when it
// makes the parser read whole directories of zeros.
const maxFuzzSectors = 1024

// decodeSparseISO reads a fuzz input: the image size in sectors (u16 LE, capped), then patches of
// (LBA u16 LE, length u16 LE, bytes), each at most one sector. Later patches win.
func decodeSparseISO(b []byte) *sparseISO {
	if len(b) < 2 {
		return &sparseISO{}
	}
	img := &sparseISO{size: int64(min(binary.LittleEndian.Uint16(b), maxFuzzSectors)) * SectorSize}
	b = b[2:]
	for len(b) >= 4 {
		lba := int64(binary.LittleEndian.Uint16(b))
		n := min(int(binary.LittleEndian.Uint16(b[2:])), SectorSize, len(b)-4)
		img.patches = append(img.patches, sparsePatch{off: lba * SectorSize, data: b[4 : 4+n]})
		b = b[4+n:]
	}
	return img
}

// encodeSparseISO is the inverse of decodeSparseISO for whole sectors of img, trimming each
// sector's trailing zeros.
func encodeSparseISO(img []byte, lbas ...uint32) []byte {
	out := binary.LittleEndian.AppendUint16(nil, uint16(len(img)/SectorSize))
	for _, lba := range lbas {
		sector := img[int(lba)*SectorSize : int(lba+1)*SectorSize]
		n := len(sector)
		for n > 0 && sector[n-1] == 0 {
			n--
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(lba))
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = append(out, sector[:n]...)
	}
	return out
}

func (s *sparseISO) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= s.size {
		return 0, io.EOF
	}
	n := len(p)
	if rest := s.size - off; int64(n) > rest {
		n = int(rest)
	}
	clear(p[:n])
	for _, patch := range s.patches {
		lo, hi := max(off, patch.off), min(off+int64(n), patch.off+int64(len(patch.data)))
		if lo < hi {
			copy(p[lo-off:hi-off], patch.data[lo-patch.off:hi-patch.off])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// FuzzReadVolume checks that no image makes ReadVolume, Walk, ReadDir or Lookup panic, loop or
// allocate beyond the directory bound, and that Rock Ridge names never add path components.
// Seeds in testdata/fuzz/FuzzReadVolume are descriptor and directory sectors of the fixtures.
func FuzzReadVolume(f *testing.F) {
	f.Add(encodeSparseISO(buildMiniISO([][]byte{
		encodeDirRecord("COREOS", 19, SectorSize, true, encodeNM(0, "coreos")),
		encodeDirRecord("LONG.JSO;1", 21, 1, false, append(encodeNM(nmContinue, "lo"), encodeCE(20, 0, 11)...)),
	}, map[uint32][]byte{
		19: encodeDirRecord("IGNINFO.JSO;1", 21, 36, false, encodeNM(0, "igninfo.json")),
		20: encodeNM(0, "ng.json"),
		21: []byte(`{"file": "images/ignition.img"}`),
	}), 16, 17, 18, 19, 20))
	f.Add(encodeSparseISO(buildMiniISO([][]byte{
		encodeDirRecord("LOOP", 18, SectorSize, true, encodeCE(19, 0, 28)),
	}, map[uint32][]byte{19: encodeCE(19, 0, 28)}), 16, 17, 18, 19))

	f.Fuzz(func(t *testing.T, data []byte) {
		img := decodeSparseISO(data)
		v, err := ReadVolume(img, img.size)
		if err != nil {
			return
		}
		walked := 0
		_ = v.Walk(func(e WalkEntry) error {
			walked++
			if strings.Count(e.Path, "/") != strings.Count(e.DisplayPath, "/") {
				t.Fatalf("DisplayPath %q does not have the components of Path %q", e.DisplayPath, e.Path)
			}
			// A few, shallow: each lookup reads every directory on its path.
			if walked <= 10 && strings.Count(e.Path, "/") < 3 {
				if e.Dir {
					_, _ = v.ReadDir(e.Record)
				}
				_, _ = v.Lookup(e.Path)
			}
			return nil
		})
		for _, p := range []string{"", "COREOS/IGNINFO.JSO", "IMAGES/PXEBOOT/ROOTFS.IMG", "../A/./B/.."} {
			_, _ = v.Lookup(p)
		}
	})
}

// The committed seeds must be images the parser accepts, or the fuzzer starts from noise.
func TestFuzzSeedsAreValidISOs(t *testing.T) {
	for _, name := range fuzzSeedFiles(t) {
		data := readFuzzSeed(t, name)
		img := decodeSparseISO(data)
		v, err := ReadVolume(img, img.size)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		n := 0
		if err := v.Walk(func(WalkEntry) error { n++; return nil }); err != nil || n == 0 {
			t.Errorf("%s: Walk found %d records, err %v", name, n, err)
		}
	}
}

const fuzzSeedDir = "testdata/fuzz/FuzzReadVolume"

func fuzzSeedFiles(t *testing.T) []string {
	entries, err := os.ReadDir(fuzzSeedDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		t.Fatalf("no seeds in %s", fuzzSeedDir)
	}
	return names
}

// readFuzzSeed decodes a corpus file in go test's format: a header line, then []byte("...").
func readFuzzSeed(t *testing.T, name string) []byte {
	raw, err := os.ReadFile(filepath.Join(fuzzSeedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	header, value, ok := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	quoted, isBytes := strings.CutPrefix(value, "[]byte(")
	if !ok || header != "go test fuzz v1" || !isBytes {
		t.Fatalf("%s: not a go test fuzz v1 file with one []byte value", name)
	}
	data, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(data)
}
