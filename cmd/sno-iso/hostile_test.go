package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// setIgninfo replaces the content of coreos/igninfo.json in a 2023-07 ISO.
func setIgninfo(t *testing.T, iso []byte, content string) {
	fixtures.SetFile(t, iso, "IGNINFO.JSO;1", 413696, []byte(content))
}

// TestHostileAreasRefused: an ISO whose metadata names an area over the ISO's own structures
// (the directories, the volume descriptors, the system area, the path tables, the boot
// catalog, the backup GPT, its own metadata files) or past what can be allocated
// is refused by every command, reset included, with the same error; nothing is written.
func TestHostileAreasRefused(t *testing.T) {
	modern := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	legacy := fixtures.Bytes(t, "embed-areas-2021-01.iso")
	cases := []struct {
		name  string
		base  []byte
		craft func(t *testing.T, iso []byte)
		want  string
		// size, when set, extends the ISO file (sparse) to this many bytes.
		size int64
	}{
		{"igninfo names the root directory", modern, func(t *testing.T, iso []byte) {
			setIgninfo(t, iso, `{"file": "/"}`)
		}, "the Ignition area (coreos/igninfo.json)", 0},
		{"ignition.img at LBA 16", modern, func(t *testing.T, iso []byte) {
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), 16, 262144)
		}, "volume descriptors", 0},
		{"legacy karg area at byte 32768", legacy, func(t *testing.T, iso []byte) {
			binary.LittleEndian.PutUint64(iso[32672+24:], 32768)
		}, "karg area 1 (coreKarg header)", 0},
		{"legacy karg area over the first descriptor", legacy, func(t *testing.T, iso []byte) {
			binary.LittleEndian.PutUint64(iso[32672+24:], 32000)
		}, "system area", 0},
		{"karg area over another", modern, func(t *testing.T, iso []byte) {
			// Both kargs.json areas in isolinux.cfg, the second overlapping the first.
			kargs := `{"default": "a", "size": 1139, "files": [{"offset": 1000, "path": "isolinux/isolinux.cfg"},
				{"offset": 1869, "path": "isolinux/isolinux.cfg"}]}`
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "KARGS.JSO;1"), 415744/2048, uint32(len(kargs)))
			copy(iso[415744:], kargs)
		}, "overlaps karg area", 0},
		// The 2023-07 fixture's structures: path tables at sectors 21 and 23 (Joliet's at 25
		// and 27), the Joliet root directory at 36, the boot catalog at 44, and the backup GPT
		// header in the image's last 512 bytes.
		{"ignition.img over the boot catalog", modern, func(t *testing.T, iso []byte) {
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), 44, 2048)
		}, "overlaps the El Torito boot catalog", 0},
		{"igninfo names the boot catalog", modern, func(t *testing.T, iso []byte) {
			setIgninfo(t, iso, `{"file": "isolinux/boot.cat"}`)
		}, "overlaps the El Torito boot catalog", 0},
		{"ignition.img over a path table", modern, func(t *testing.T, iso []byte) {
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), 23, 96)
		}, "overlaps the path table at sector 23", 0},
		{"ignition.img over the Joliet root", modern, func(t *testing.T, iso []byte) {
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), 36, 2048)
		}, "overlaps the Joliet root directory", 0},
		{"ignition.img over the backup GPT", modern, func(t *testing.T, iso []byte) {
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "IGNITION.IMG;1"), uint32(len(iso)/2048-1), 2048)
		}, "overlaps the backup GPT header", 0},
		{"igninfo names the kargs metadata", modern, func(t *testing.T, iso []byte) {
			setIgninfo(t, iso, `{"file": "coreos/kargs.jso"}`)
		}, "overlaps the metadata file kargs.json", 0},
		{"igninfo names itself", modern, func(t *testing.T, iso []byte) {
			setIgninfo(t, iso, `{"file": "coreos/igninfo.jso"}`)
		}, "overlaps the metadata file igninfo.json", 0},
		{"igninfo MaxInt64 length", modern, func(t *testing.T, iso []byte) {
			setIgninfo(t, iso, `{"file": "images/ignition.img", "offset": 1, "length": 9223372036854775807}`)
		}, "runs past the end", 0},
		{"igninfo names the root file system", modern, func(t *testing.T, iso []byte) {
			// A regular file inside the image, but larger than any Ignition area.
			setIgninfo(t, iso, `{"file": "images/pxeboot/rootfs.img"}`)
			fixtures.SetExtent(iso, fixtures.DirectoryRecord(t, iso, "ROOTFS.IMG;1"), 1024, 70<<20)
		}, "larger than the", 80 << 20},
	}
	cfg := filepath.Join(t.TempDir(), "c.ign")
	os.WriteFile(cfg, []byte(smallConfig), 0o644)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			iso := filepath.Join(dir, "hostile.iso")
			b := bytes.Clone(c.base)
			c.craft(t, b)
			os.WriteFile(iso, b, 0o644)
			if c.size > 0 {
				os.Truncate(iso, c.size)
			}
			before := fileSHA(t, iso)
			for _, args := range [][]string{
				{"reset", iso},
				{"kargs", "reset", iso},
				{"ignition", "embed", "-i", cfg, iso},
				{"ignition", "show", iso},
				{"inspect", iso},
			} {
				r := sno(t, nil, args...)
				wantFailure(t, r, c.want)
				if r.code != 1 {
					t.Errorf("%v: exit %d, want 1", args, r.code)
				}
				if fileSHA(t, iso) != before {
					t.Fatalf("%v changed the ISO", args)
				}
			}
			if ents := dirEntries(t, dir); len(ents) != 1 {
				t.Errorf("left behind %v", ents)
			}
		})
	}
}
