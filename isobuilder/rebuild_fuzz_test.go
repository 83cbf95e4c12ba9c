package isobuilder

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

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

func FuzzFormatKargsJSON(f *testing.F) {
	f.Add([]byte(`{"default": "a coreos.liveiso=x", "files": [{"path": "EFI/fedora/grub.cfg", "offset": 970, "pad": "#", "end": "\n"}], "size": 1139}`))
	f.Add([]byte(`{"default": "a", "files": [{"path": "images/cdboot.img", "offset": 66688, "pad": "\u0000", "end": "\u0000"}], "size": 896}   `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := formatKargsJSON(raw, "new \"default\"\x01")
		if err != nil {
			return
		}
		var back struct {
			Default string `json:"default"`
		}
		if err := json.Unmarshal(out, &back); err != nil || back.Default != "new \"default\"\x01" {
			t.Fatalf("output %q does not parse back (%v)", out, err)
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
