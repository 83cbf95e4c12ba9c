package isobuilder

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
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

// FuzzInspectInitramfs: any input is either accepted as a live initramfs or refused with an
// error; never a panic.
func FuzzInspectInitramfs(f *testing.F) {
	stock := stockInitramfs(f, `{"live-initrd-network": true}`)
	f.Add(stock)
	f.Add(append(slices.Clone(stock), mustPack(f, initrd.Files{initrd.IgnitionPath: []byte("{}")})...))
	f.Add(mustPack(f, initrd.Files{initrd.IgnitionPath: nil}))
	f.Add([]byte("initrd data\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := InspectInitramfs(bytes.NewReader(b)); err != nil {
			return
		}
		// Accepted: the stamp is there and no customization, whatever the paths look like.
		files, err := initrd.Read(bytes.NewReader(b), initrd.ReadOptions{MaxSize: MaxInitramfsSize})
		if err != nil {
			t.Fatalf("accepted an initramfs that does not read back: %v", err)
		}
		stamped := false
		for name := range files {
			p := unpackedPath(name)
			stamped = stamped || p == LiveInitramfsStamp
			if p == initrd.IgnitionPath || initrd.IsNetworkFile(p) {
				t.Fatalf("accepted an initramfs holding %s", name)
			}
		}
		if !stamped {
			t.Fatal("accepted an initramfs without the stamp")
		}
	})
}

func FuzzUnpackMinimal(f *testing.F) {
	full := make([]byte, 64*SectorSize)
	for i := range full {
		full[i] = byte(i * 7)
	}
	minimal := slices.Concat(make([]byte, 3*SectorSize), full[5*SectorSize:5*SectorSize+100], make([]byte, 500))
	var packed bytes.Buffer
	if _, err := compressMinimal(bytes.NewReader(minimal), int64(len(minimal)),
		[]embed.MinisoEntry{{Minimal: 3, Full: 5, Length: 100}}, &packed); err != nil {
		f.Fatal(err)
	}
	m := &embed.Miniso{Entries: []embed.MinisoEntry{{Minimal: 3, Full: 5, Length: 100}}, XZPacked: packed.Bytes(),
		Digest: sha256.Sum256(minimal)}
	if err := UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, io.Discard); err != nil {
		f.Fatalf("the seed does not unpack: %v", err)
	}
	seed, err := m.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, dat []byte) {
		m, err := embed.DecodeMiniso(dat)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, &out); err == nil {
			if sha256.Sum256(out.Bytes()) != m.Digest {
				t.Fatal("UnpackMinimal succeeded but the output does not have the recorded digest")
			}
		}
	})
}

func FuzzParseBootCatalog(f *testing.F) {
	seed := make([]byte, SectorSize)
	seed[0], seed[30], seed[31] = 1, 0x55, 0xaa
	seed[32], seed[38], seed[40] = 0x88, 4, 45 // BIOS default entry: 4 sectors at LBA 45
	copy(seed[64:], []byte{0x91, 0xef, 1, 0})  // last section: UEFI, one entry
	seed[96], seed[102], seed[104] = 0x88, 4, 64
	f.Add(seed[:128])
	f.Fuzz(func(t *testing.T, in []byte) {
		sector := make([]byte, SectorSize)
		copy(sector, in)
		entries, err := parseBootCatalog(sector)
		if err == nil && len(entries) > (SectorSize-32)/32 {
			t.Fatalf("%d entries from one sector", len(entries))
		}
	})
}

// FuzzRelayout moves the MBR and GPT of a hostile system area: it must fail cleanly or
// produce GPT headers with valid checksums.
func FuzzRelayout(f *testing.F) {
	sys := make([]byte, 32768)
	sys[510], sys[511] = 0x55, 0xaa
	binary.LittleEndian.PutUint32(sys[mbrBootFilePtr:], 100*4)
	p := sys[mbrPartitionTable:]
	p[0] = 0x80
	binary.LittleEndian.PutUint32(p[12:], 2048)
	p[16+4] = 0xef
	binary.LittleEndian.PutUint32(p[16+8:], 200*4)
	binary.LittleEndian.PutUint32(p[16+12:], 4)
	h := sys[512:]
	copy(h, "EFI PART")
	binary.LittleEndian.PutUint32(h[12:], 92)
	binary.LittleEndian.PutUint64(h[24:], 1)
	binary.LittleEndian.PutUint64(h[32:], 2047)
	binary.LittleEndian.PutUint64(h[40:], 34)
	binary.LittleEndian.PutUint64(h[48:], 2014)
	binary.LittleEndian.PutUint64(h[72:], 2)
	binary.LittleEndian.PutUint32(h[80:], 128)
	binary.LittleEndian.PutUint32(h[84:], 128)
	e := sys[1024:]
	e[0] = 1
	binary.LittleEndian.PutUint64(e[40:], 1447)
	f.Add(sys[:1152])
	f.Fuzz(func(t *testing.T, head []byte) {
		sys := make([]byte, 32768)
		copy(sys, head)
		r := &relayout{moved: []movedExtent{{old: 100 * SectorSize, length: 38912, new: 50 * SectorSize, newLength: 38912},
			{old: 200 * SectorSize, length: 2048, new: 60 * SectorSize, newLength: 2048}},
			oldFile: 2048, newFile: 4096, oldVol: 1448, newVol: 800, oldBackup: 2047, newBackup: 4095, oldLastUsable: 2014, newLastUsable: 4062}
		_ = r.mbr(sys)
		g, err := parseGPT(sys)
		if err != nil {
			return
		}
		out, err := os.Create(filepath.Join(t.TempDir(), "out.img"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := r.gpt(g, sys, out); err != nil {
			return
		}
		hdr := append([]byte(nil), g.header...)
		want := binary.LittleEndian.Uint32(hdr[16:])
		clear(hdr[16:20])
		if crc32.ChecksumIEEE(hdr) != want {
			t.Fatal("the primary GPT header checksum is wrong")
		}
	})
}
