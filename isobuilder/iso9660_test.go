package isobuilder

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

func openTestVolume(t *testing.T, img []byte) *Volume {
	t.Helper()
	v, err := ReadVolume(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatalf("ReadVolume: %v", err)
	}
	return v
}

func walkVolume(t *testing.T, v *Volume) []WalkEntry {
	t.Helper()
	var entries []WalkEntry
	if err := v.Walk(func(e WalkEntry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return entries
}

func mustLookup(t *testing.T, v *Volume, path string) Record {
	t.Helper()
	rec, err := v.Lookup(path)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", path, err)
	}
	return rec
}

// Volume facts from the spec, section 8 ("Decompressed fixtures" and the paragraph after it).
func TestReadVolumeFixtures(t *testing.T) {
	coreos := []string{"primary", "boot", "supplementary"}
	tests := []struct {
		fixture, systemID, volumeID string
		sectors                     uint32
		types                       []string
		rootLBA                     uint32
	}{
		{"embed-areas-2020-09.iso", "LINUX", "rhcos-46.82.202112161843-0", 327, coreos, 29},
		{"embed-areas-2021-01.iso", "LINUX", "rhcos-47.84.202112162337-0", 330, coreos, 29},
		{"embed-areas-2021-12.iso", "LINUX", "fedora-coreos-35.20211216.dev.0", 362, coreos, 29},
		{"embed-areas-2023-07.x86_64.iso", "LINUX", "fedora-coreos-38.20230718.dev.0", 362, coreos, 29},
		{"embed-areas-2023-07.s390x.iso", "", "fedora-coreos-38.20230718.dev.0", 463, coreos, 20},
		{"synthetic.iso", "system-ID-string", "volume-ID-string", 338, []string{"primary"}, 23},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			img := fixtures.Bytes(t, tt.fixture)
			v := openTestVolume(t, img)
			if v.SystemID != tt.systemID || v.VolumeID != tt.volumeID || v.SpaceSize != tt.sectors {
				t.Errorf("system %q volume %q sectors %d, want %q %q %d",
					v.SystemID, v.VolumeID, v.SpaceSize, tt.systemID, tt.volumeID, tt.sectors)
			}
			var types []string
			for _, d := range v.Descriptors {
				types = append(types, d.Type)
				if d.Type == "boot" && d.BootSystemID != "EL TORITO SPECIFICATION" {
					t.Errorf("boot system id %q, want EL TORITO SPECIFICATION", d.BootSystemID)
				}
			}
			if !slices.Equal(types, tt.types) {
				t.Errorf("descriptor types %v, want %v", types, tt.types)
			}
			if v.Descriptors[0].VolumeID != tt.volumeID {
				t.Errorf("primary descriptor volume id %q, want %q", v.Descriptors[0].VolumeID, tt.volumeID)
			}
			want := Record{Name: ".", LBA: tt.rootLBA, Length: SectorSize, Dir: true}
			if v.Root != want {
				t.Errorf("root %+v, want %+v", v.Root, want)
			}
			if root := mustLookup(t, v, "/"); root != v.Root {
				t.Errorf(`Lookup("/") = %+v, want the root %+v`, root, v.Root)
			}
		})
	}
}

// The xorriso listing of 2023-07.x86_64 (spec section 8), which the primary tree must match:
// Walk must yield exactly these records, and Lookup must find each of them.
func TestWalkAndLookup2023x86(t *testing.T) {
	want := map[string]Record{
		"COREOS":                    {Name: "COREOS", RockRidgeName: "coreos", LBA: 35, Length: 2048, Dir: true},
		"COREOS/FEATURES.JSO":       {Name: "FEATURES.JSO", RockRidgeName: "features.json", LBA: 201, Length: 660},
		"COREOS/IGNINFO.JSO":        {Name: "IGNINFO.JSO", RockRidgeName: "igninfo.json", LBA: 202, Length: 36},
		"COREOS/KARGS.JSO":          {Name: "KARGS.JSO", RockRidgeName: "kargs.json", LBA: 203, Length: 385},
		"COREOS/MINISO.DAT":         {Name: "MINISO.DAT", RockRidgeName: "miniso.dat", LBA: 204, Length: 16384},
		"EFI":                       {Name: "EFI", RockRidgeName: "EFI", LBA: 33, Length: 2048, Dir: true},
		"EFI/FEDORA":                {Name: "FEDORA", RockRidgeName: "fedora", LBA: 34, Length: 2048, Dir: true},
		"EFI/FEDORA/GRUB.CFG":       {Name: "GRUB.CFG", RockRidgeName: "grub.cfg", LBA: 199, Length: 2192},
		"IMAGES":                    {Name: "IMAGES", RockRidgeName: "images", LBA: 31, Length: 2048, Dir: true},
		"IMAGES/EFIBOOT.IMG":        {Name: "EFIBOOT.IMG", RockRidgeName: "efiboot.img", LBA: 64, Length: 12},
		"IMAGES/IGNITION.IMG":       {Name: "IGNITION.IMG", RockRidgeName: "ignition.img", LBA: 68, Length: 262144},
		"IMAGES/PXEBOOT":            {Name: "PXEBOOT", RockRidgeName: "pxeboot", LBA: 32, Length: 2048, Dir: true},
		"IMAGES/PXEBOOT/INITRD.IMG": {Name: "INITRD.IMG", RockRidgeName: "initrd.img", LBA: 196, Length: 12},
		"IMAGES/PXEBOOT/ROOTFS.IMG": {Name: "ROOTFS.IMG", RockRidgeName: "rootfs.img", LBA: 197, Length: 12},
		"IMAGES/PXEBOOT/VMLINUZ":    {Name: "VMLINUZ", RockRidgeName: "vmlinuz", LBA: 198, Length: 11},
		"ISOLINUX":                  {Name: "ISOLINUX", RockRidgeName: "isolinux", LBA: 30, Length: 2048, Dir: true},
		"ISOLINUX/BOOT.CAT":         {Name: "BOOT.CAT", RockRidgeName: "boot.cat", LBA: 44, Length: 2048},
		"ISOLINUX/ISOLINUX.BIN":     {Name: "ISOLINUX.BIN", RockRidgeName: "isolinux.bin", LBA: 45, Length: 38912},
		"ISOLINUX/ISOLINUX.CFG":     {Name: "ISOLINUX.CFG", RockRidgeName: "isolinux.cfg", LBA: 66, Length: 3082},
		"ZIPL.PRM":                  {Name: "ZIPL.PRM", RockRidgeName: "zipl.prm", LBA: 65, Length: 116},
	}
	v := openTestVolume(t, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	seen := map[string]bool{}
	for _, e := range walkVolume(t, v) {
		seen[e.Path] = true
		w, ok := want[e.Path]
		if !ok {
			t.Errorf("Walk yielded unexpected %s", e.Path)
			continue
		}
		if e.Record != w {
			t.Errorf("Walk %s: %+v, want %+v", e.Path, e.Record, w)
		}
		if got := mustLookup(t, v, e.Path); got != w {
			t.Errorf("Lookup(%s) = %+v, want %+v", e.Path, got, w)
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("Walk did not yield %s", p)
		}
	}
	if off := mustLookup(t, v, "IMAGES/IGNITION.IMG").Offset(); off != 139264 {
		t.Errorf("IMAGES/IGNITION.IMG offset %d, want 139264", off)
	}
}

// The files that locate the embed areas in each fixture (spec section 8 tables).
func TestLookupEmbedFiles(t *testing.T) {
	tests := []struct {
		fixture, path string
		lba, length   uint32
	}{
		{"embed-areas-2020-09.iso", "IMAGES/IGNITION.IMG", 45, 262144},
		{"embed-areas-2020-09.iso", "IMAGES/EFIBOOT.IMG", 45, 0},
		{"embed-areas-2021-01.iso", "IMAGES/IGNITION.IMG", 47, 262144},
		{"embed-areas-2021-01.iso", "_CMDLINE", 44, 1131},
		{"embed-areas-2021-01.iso", "ISOLINUX/ISOLINUX.CFG", 45, 3071},
		{"embed-areas-2021-01.iso", "EFI/REDHAT/GRUB.CFG", 178, 2085},
		{"embed-areas-2021-12.iso", "IMAGES/IGNITION.IMG", 79, 262144},
		{"embed-areas-2021-12.iso", "COREOS/KARGS.JSO", 70, 311},
		{"embed-areas-2021-12.iso", "COREOS/FEATURES.JSO", 69, 62},
		{"embed-areas-2021-12.iso", "COREOS/MINISO.DAT", 71, 16384},
		{"embed-areas-2021-12.iso", "ISOLINUX/ISOLINUX.CFG", 67, 3083},
		{"embed-areas-2021-12.iso", "EFI/FEDORA/GRUB.CFG", 210, 2192},
		{"embed-areas-2023-07.x86_64.iso", "COREOS/KARGS.JSO", 203, 385},
		{"embed-areas-2023-07.x86_64.iso", "COREOS/IGNINFO.JSO", 202, 36},
		{"embed-areas-2023-07.s390x.iso", "IMAGES/CDBOOT.IMG", 35, 394240},
		{"embed-areas-2023-07.s390x.iso", "COREOS/IGNINFO.JSO", 229, 74},
		{"embed-areas-2023-07.s390x.iso", "COREOS/KARGS.JSO", 230, 283},
		{"embed-areas-2023-07.s390x.iso", "COREOS/FEATURES.JSO", 228, 660},
		{"embed-areas-2023-07.s390x.iso", "COREOS/MINISO.DAT", 231, 16384},
	}
	for _, tt := range tests {
		t.Run(tt.fixture+"/"+tt.path, func(t *testing.T) {
			v := openTestVolume(t, fixtures.Bytes(t, tt.fixture))
			rec := mustLookup(t, v, tt.path)
			if rec.LBA != tt.lba || rec.Length != tt.length || rec.Dir {
				t.Errorf("got LBA %d length %d dir %v, want file at LBA %d length %d", rec.LBA, rec.Length, rec.Dir, tt.lba, tt.length)
			}
		})
	}
}

func TestRockRidgeNames(t *testing.T) {
	tests := []struct{ fixture, path, display string }{
		{"embed-areas-2023-07.x86_64.iso", "COREOS/IGNINFO.JSO", "coreos/igninfo.json"},
		{"embed-areas-2023-07.x86_64.iso", "IMAGES/PXEBOOT/ROOTFS.IMG", "images/pxeboot/rootfs.img"},
		{"embed-areas-2023-07.x86_64.iso", "EFI/FEDORA/GRUB.CFG", "EFI/fedora/grub.cfg"},
		{"embed-areas-2021-01.iso", "_CMDLINE", ".cmdline"},
		{"embed-areas-2023-07.s390x.iso", "IMAGES/GENERICD.PRM", "images/genericdvd.prm"},
		{"embed-areas-2023-07.s390x.iso", "IMAGES/INITRD.ADD", "images/initrd.addrsize"},
		{"embed-areas-2023-07.s390x.iso", "IMAGES/REDHAT.EXE", "images/redhat.exec"},
		{"embed-areas-2023-07.s390x.iso", "BOOT.CAT", "boot.catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture+"/"+tt.path, func(t *testing.T) {
			v := openTestVolume(t, fixtures.Bytes(t, tt.fixture))
			var found bool
			for _, e := range walkVolume(t, v) {
				if e.Path == tt.path {
					found = true
					if e.DisplayPath != tt.display {
						t.Errorf("DisplayPath %q, want %q", e.DisplayPath, tt.display)
					}
				}
			}
			if !found {
				t.Fatalf("Walk did not yield %s", tt.path)
			}
			base := tt.display[strings.LastIndex(tt.display, "/")+1:]
			if rec := mustLookup(t, v, tt.path); rec.RockRidgeName != base {
				t.Errorf("Lookup RockRidgeName %q, want %q", rec.RockRidgeName, base)
			}
			// Rock Ridge names are for display only: coreos-installer never matches them.
			if _, err := v.Lookup(tt.display); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Lookup(%q) by Rock Ridge name: err %v, want not found", tt.display, err)
			}
		})
	}
}

// synthetic.iso has no Rock Ridge; its walk is the one coreos-installer's own unit test expects.
func TestSyntheticWalk(t *testing.T) {
	want := []string{
		"CONTENT", "CONTENT/DIR", "CONTENT/DIR/SUBFILE.TXT", "CONTENT/FILE.TXT", "LARGEDIR",
		"NAMES", `NAMES/!"%&'()*.+,-`, "NAMES/:<=>?", "NAMES/ABC", "NAMES/ABC.D", "NAMES/ABC.DE",
		"NAMES/ABC.DEF", "NAMES/ABCDE000", "NAMES/ABCDEFGH", "NAMES/ABCDEFGH.I", "NAMES/ABCDEFGH.IJ",
		"NAMES/ABCDEFGH.IJK", "NAMES/ABCDEFGH.M", "NAMES/ABCDEFGH.MN", "NAMES/ABCDEFGH.MNO",
		"REALLY", "REALLY/VERY", "REALLY/VERY/DEEPLY", "REALLY/VERY/DEEPLY/NESTED",
		"REALLY/VERY/DEEPLY/NESTED/FILE.TXT",
	}
	for i := 1; i <= 150; i++ {
		want = append(want, fmt.Sprintf("LARGEDIR/%d.DAT", i))
	}
	// The ISO writer sorts names, so on-disc order is sorted order.
	slices.Sort(want)

	img := fixtures.Bytes(t, "synthetic.iso")
	v := openTestVolume(t, img)
	entries := walkVolume(t, v)
	var got []string
	for _, e := range entries {
		got = append(got, e.Path)
		if e.DisplayPath != e.Path || e.RockRidgeName != "" {
			t.Errorf("%s: DisplayPath %q, RockRidgeName %q; synthetic.iso has no Rock Ridge", e.Path, e.DisplayPath, e.RockRidgeName)
		}
		if rec := mustLookup(t, v, e.Path); rec != e.Record {
			t.Errorf("Lookup(%s) = %+v, Walk gave %+v", e.Path, rec, e.Record)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk:\n%q\nwant:\n%q", got, want)
	}

	// LARGEDIR's 150 records span four sectors, each ended by zero padding.
	large := mustLookup(t, v, "LARGEDIR")
	if large.Length != 4*SectorSize {
		t.Errorf("LARGEDIR length %d, want %d", large.Length, 4*SectorSize)
	}
	records, err := v.ReadDir(large)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 150 {
		t.Errorf("ReadDir(LARGEDIR) gave %d records, want 150", len(records))
	}
	if last := records[len(records)-1]; last.Name != "99.DAT" || last.LBA != 187 {
		t.Errorf("last LARGEDIR record %+v, want 99.DAT at LBA 187", last)
	}

	file := mustLookup(t, v, "REALLY/VERY/DEEPLY/NESTED/FILE.TXT")
	if data := img[file.Offset() : file.Offset()+int64(file.Length)]; string(data) != "foo\n" {
		t.Errorf("NESTED/FILE.TXT holds %q, want %q", data, "foo\n")
	}
	if sub := mustLookup(t, v, "CONTENT/DIR/SUBFILE.TXT"); string(img[sub.Offset():sub.Offset()+4]) != "bar\n" {
		t.Errorf("SUBFILE.TXT does not hold bar")
	}
}

func TestReadDir(t *testing.T) {
	v := openTestVolume(t, fixtures.Bytes(t, "synthetic.iso"))
	records, err := v.ReadDir(mustLookup(t, v, "CONTENT"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Name: "DIR", LBA: 30, Length: 2048, Dir: true},
		{Name: "FILE.TXT", LBA: 36, Length: 4},
	}
	if !slices.Equal(records, want) {
		t.Errorf("ReadDir(CONTENT) = %+v, want %+v", records, want)
	}
	if _, err := v.ReadDir(mustLookup(t, v, "CONTENT/FILE.TXT")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("ReadDir of a file: err %v, want not a directory", err)
	}
}

// Lookup resolves paths exactly as coreos-installer does: normalised primary names, compared
// case-sensitively, with ".", ".." and empty components resolved first.
func TestLookupNormalisation(t *testing.T) {
	v := openTestVolume(t, fixtures.Bytes(t, "synthetic.iso"))
	tests := []struct {
		path  string
		found string // record name, "" for not found
	}{
		{"NAMES/ABC", "ABC"},           // "ABC.;1": ";1" then the trailing "." stripped
		{"NAMES/ABC.", ""},             // the stripped dot is not matched
		{"NAMES/ABCDE000", "ABCDE000"}, // "ABCDE000.;1"
		{"NAMES/ABC.DEF", "ABC.DEF"},   // an inner dot stays
		{"CONTENT/FILE.TXT", "FILE.TXT"},
		{"CONTENT/FILE.TXT;1", ""}, // the version suffix is not part of the name
		{"NAMES/:<=>?", ":<=>?"},
		{`NAMES/!"%&'()*.+,-`, `!"%&'()*.+,-`},
		{"/CONTENT/./DIR/../FILE.TXT", "FILE.TXT"},
		{"../../CONTENT//DIR/SUBFILE.TXT", "SUBFILE.TXT"},
		{"CONTENT/DIR/", "DIR"},
		{"REALLY/VERY/DEEPLY/NESTED/FILE.TXT", "FILE.TXT"},
		{"content/file.txt", ""}, // case-sensitive
		{"Content", ""},
		{"", "."},
		{"/", "."},
		{"CONTENT/..", "."},
	}
	for _, tt := range tests {
		rec, err := v.Lookup(tt.path)
		switch {
		case tt.found == "" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("Lookup(%q) = %+v, %v; want not found", tt.path, rec, err)
		case tt.found != "" && (err != nil || rec.Name != tt.found):
			t.Errorf("Lookup(%q) = %+v, %v; want %s", tt.path, rec, err, tt.found)
		}
	}

	x86 := openTestVolume(t, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	for _, p := range []string{"COREOS/IGNINFO.JSON", "coreos/igninfo.json", "coreos/IGNINFO.JSO", "IMAGES/PXEBOOT/VMLINUZ."} {
		if rec, err := x86.Lookup(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("2023-07 Lookup(%q) = %+v, %v; want not found", p, rec, err)
		}
	}
	if rec := mustLookup(t, x86, "IMAGES/PXEBOOT/VMLINUZ"); rec.LBA != 198 {
		t.Errorf("VMLINUZ at LBA %d, want 198", rec.LBA)
	}
}

func TestLookupNotFound(t *testing.T) {
	v := openTestVolume(t, fixtures.Bytes(t, "synthetic.iso"))
	tests := []struct{ path, msg string }{
		{"MISSING", "no record for MISSING in directory /"},
		{"CONTENT/DIR/NOPE", "no record for NOPE in directory CONTENT/DIR"},
		{"MISSING/STUFF.TXT", "intermediate directory MISSING does not exist in directory /"},
		{"CONTENT/GONE/X", "intermediate directory GONE does not exist in directory CONTENT"},
		{"CONTENT/FILE.TXT/STUFF.TXT", `component "FILE.TXT" in path CONTENT/FILE.TXT/STUFF.TXT is not a directory`},
	}
	for _, tt := range tests {
		_, err := v.Lookup(tt.path)
		var nf *NotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lookup(%q): err %v, want a *NotFoundError that is fs.ErrNotExist", tt.path, err)
			continue
		}
		if err.Error() != tt.msg {
			t.Errorf("Lookup(%q): %q, want %q", tt.path, err, tt.msg)
		}
	}
}

func TestTruncatedISO(t *testing.T) {
	for _, name := range []string{"synthetic.iso", "embed-areas-2023-07.x86_64.iso"} {
		img := fixtures.Bytes(t, name)
		half := img[:len(img)/2]
		_, err := ReadVolume(bytes.NewReader(half), int64(len(half)))
		if err == nil || !strings.Contains(err.Error(), "ISO image is incomplete") {
			t.Fatalf("%s truncated to half: err %v, want ISO image is incomplete", name, err)
		}
		v := openTestVolume(t, img)
		for _, size := range []string{fmt.Sprint(v.SpaceSize * SectorSize), fmt.Sprint(len(half))} {
			if !strings.Contains(err.Error(), size) {
				t.Errorf("%s: %q does not name the size %s", name, err, size)
			}
		}
	}
	// A file longer than its volume (hybrid padding) is fine.
	img := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	if v := openTestVolume(t, img); int64(v.SpaceSize)*SectorSize >= int64(len(img)) {
		t.Errorf("2023-07.x86_64: volume %d sectors, file %d bytes; expected a file longer than its volume", v.SpaceSize, len(img))
	}
}

// mutatedFixture returns a copy of the fixture with edit applied.
func mutatedFixture(t *testing.T, name string, edit func(img []byte)) []byte {
	t.Helper()
	img := bytes.Clone(fixtures.Bytes(t, name))
	edit(img)
	return img
}

// rawRecordOffset finds the directory record named name (raw identifier) in the directory at lba,
// by searching the bytes, independently of the parser.
func rawRecordOffset(t *testing.T, img []byte, lba uint32, name string) int {
	t.Helper()
	sector := img[int(lba)*SectorSize : int(lba+1)*SectorSize]
	i := bytes.Index(sector, append([]byte{byte(len(name))}, name...))
	if i < 32 {
		t.Fatalf("record %q not found at LBA %d", name, lba)
	}
	return int(lba)*SectorSize + i - 32
}

func TestReadVolumeErrors(t *testing.T) {
	const pvd, next = 16 * SectorSize, 17 * SectorSize
	tests := []struct {
		name, fixture string
		edit          func(img []byte)
		want          string
	}{
		{"no primary", "synthetic.iso", func(img []byte) { img[pvd] = 3 }, "no primary volume descriptor found in ISO"},
		{"bad boot record id", "embed-areas-2020-09.iso", func(img []byte) { copy(img[next+1:], "CD002") }, "unknown descriptor ID"},
		{"bad primary version", "synthetic.iso", func(img []byte) { img[pvd+6] = 2 }, "unknown descriptor version 2"},
		{"bad system id", "synthetic.iso", func(img []byte) { img[pvd+8] = '\n' }, "invalid string name"},
		{"root not a directory", "synthetic.iso", func(img []byte) { img[pvd+156+25] = 0 }, "root directory record"},
		{"root record too long", "synthetic.iso", func(img []byte) { img[pvd+156] = 60 }, "root directory record"},
		{"no terminator", "synthetic.iso", func(img []byte) {
			for lba := 17; lba < 17+maxDescriptors; lba++ {
				img[lba*SectorSize] = 3
			}
		}, "no volume descriptor set terminator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := mutatedFixture(t, tt.fixture, tt.edit)
			_, err := ReadVolume(bytes.NewReader(img), int64(len(img)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
	for _, size := range []int{0, 100, pvd + 10, next + SectorSize} {
		img := fixtures.Bytes(t, "synthetic.iso")[:size]
		if size == next+SectorSize {
			img = bytes.Clone(img)
			img[next] = 3 // not the terminator: the next descriptor lies past the end
		}
		_, err := ReadVolume(bytes.NewReader(img), int64(len(img)))
		if err == nil || !strings.Contains(err.Error(), "past the end") {
			t.Errorf("%d-byte file: err %v, want past the end", size, err)
		}
	}
}

// Corrupt directory records give errors from Walk and Lookup, never panics.
func TestCorruptDirectories(t *testing.T) {
	const root, content, names, contentDir = 23, 29, 24, 30
	tests := []struct {
		name   string
		edit   func(t *testing.T, img []byte)
		lookup string // a path whose lookup must fail too
		want   string
	}{
		{"invalid name byte", func(t *testing.T, img []byte) {
			img[rawRecordOffset(t, img, names, "ABC.D;1")+33] = 0xff
		}, "NAMES/ZZZ", "invalid string name"},
		{"record past the directory end", func(t *testing.T, img []byte) {
			// NAMES ends just inside its last record.
			last := rawRecordOffset(t, img, names, "ABCDEFGH.MNO;1") - names*SectorSize
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, root, "NAMES")+10:], uint32(last+20))
		}, "NAMES/ZZZ", "incomplete directory record at byte 642 of directory NAMES"},
		{"record shorter than its header", func(t *testing.T, img []byte) {
			img[rawRecordOffset(t, img, content, "FILE.TXT;1")] = 20
		}, "CONTENT/FILE.TXT", "below the 33-byte minimum"},
		{"name longer than the record", func(t *testing.T, img []byte) {
			img[rawRecordOffset(t, img, content, "FILE.TXT;1")+32] = 200
		}, "CONTENT/FILE.TXT", "runs past the"},
		{"huge directory length", func(t *testing.T, img []byte) {
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, root, "LARGEDIR")+10:], 0xffffffff)
		}, "LARGEDIR/1.DAT", "more than the 16777216 bytes"},
		{"directory past the end of the file", func(t *testing.T, img []byte) {
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, root, "LARGEDIR")+2:], 0x00ffffff)
		}, "LARGEDIR/1.DAT", "past the end of the ISO"},
		{"directory pointing to its parent", func(t *testing.T, img []byte) {
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, content, "DIR")+2:], content)
		}, "", "directory loop"},
		{"directory pointing to itself", func(t *testing.T, img []byte) {
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, contentDir, "SUBFILE.TXT;1")+2:], contentDir)
			img[rawRecordOffset(t, img, contentDir, "SUBFILE.TXT;1")+25] = 2
		}, "", "directory loop"},
		{"directory pointing to the root", func(t *testing.T, img []byte) {
			binary.LittleEndian.PutUint32(img[rawRecordOffset(t, img, root, "REALLY")+2:], root)
		}, "", "directory loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := mutatedFixture(t, "synthetic.iso", func(img []byte) { tt.edit(t, img) })
			v := openTestVolume(t, img)
			err := v.Walk(func(WalkEntry) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Walk: err %v, want %q", err, tt.want)
			}
			if tt.lookup == "" {
				return
			}
			_, err = v.Lookup(tt.lookup)
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Lookup(%s): err %v, want %q", tt.lookup, err, tt.want)
			}
		})
	}
}

// A zero length byte skips to the sector boundary after the next byte, as in coreos-installer:
// a zero in a sector's last byte hides the whole next sector.
func TestZeroLengthByteInLastByteOfSector(t *testing.T) {
	var sector []byte
	for i := 0; len(sector) < SectorSize-1; i++ {
		// Seven 255-byte records, then two odd 131-byte ones, end at byte 2047.
		n := 255
		if i >= 7 {
			n = 131
		}
		r := encodeDirRecord(fmt.Sprintf("F%d", i), 30, 1, false, nil)
		sector = append(sector, encodeDirRecord(fmt.Sprintf("F%d", i), 30, 1, false, make([]byte, n-len(r)))...)
	}
	v := openTestVolume(t, buildMiniISO([][]byte{encodeDirRecord("D", 19, 3*SectorSize, true, nil)}, map[uint32][]byte{
		19: sector,
		20: encodeDirRecord("SKIPPED", 30, 1, false, nil),
		21: encodeDirRecord("SEEN", 30, 1, false, nil),
	}))
	records, err := v.ReadDir(mustLookup(t, v, "D"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range records {
		names = append(names, r.Name)
	}
	want := []string{"F0", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "SEEN"}
	if !slices.Equal(names, want) {
		t.Errorf("records %v, want %v", names, want)
	}
	if _, err := v.Lookup("D/SKIPPED"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lookup(D/SKIPPED): err %v, want not found", err)
	}
}

// Like coreos-installer, Lookup stops at the first match: records after it are not parsed.
func TestLookupStopsAtFirstMatch(t *testing.T) {
	img := mutatedFixture(t, "synthetic.iso", func(img []byte) {
		img[rawRecordOffset(t, img, 24, "ABCDEFGH.MNO;1")+33] = 0xff
	})
	v := openTestVolume(t, img)
	if rec := mustLookup(t, v, "NAMES/ABC"); rec.Name != "ABC" {
		t.Errorf("Lookup(NAMES/ABC) = %+v", rec)
	}
	if _, err := v.Lookup("NAMES/MISSING"); err == nil || !strings.Contains(err.Error(), "invalid string name") {
		t.Errorf("Lookup past the corrupt record: err %v, want invalid string name", err)
	}
}

func TestWalkStopsOnCallbackError(t *testing.T) {
	v := openTestVolume(t, fixtures.Bytes(t, "synthetic.iso"))
	stop := errors.New("stop")
	var visited []string
	err := v.Walk(func(e WalkEntry) error {
		visited = append(visited, e.Path)
		if e.Path == "CONTENT/DIR" {
			return stop
		}
		return nil
	})
	if err != stop || !slices.Equal(visited, []string{"CONTENT", "CONTENT/DIR"}) {
		t.Errorf("Walk returned %v after %v; want the callback's error after CONTENT, CONTENT/DIR", err, visited)
	}
}

// buildMiniISO lays out a minimal ISO: the primary descriptor at LBA 16, the terminator at 17,
// the root directory (records given) at 18, and the extra sectors given.
func buildMiniISO(rootRecords [][]byte, sectors map[uint32][]byte) []byte {
	n := uint32(19)
	for lba := range sectors {
		n = max(n, lba+1)
	}
	img := make([]byte, n*SectorSize)
	pvd := img[16*SectorSize:]
	pvd[0] = descriptorPrimary
	copy(pvd[1:], "CD001")
	pvd[6] = 1
	copy(pvd[8:40], fmt.Sprintf("%-32s", "TEST"))
	copy(pvd[40:72], fmt.Sprintf("%-32s", "TEST-VOLUME"))
	binary.LittleEndian.PutUint32(pvd[80:], n)
	copy(pvd[156:], encodeDirRecord("\x00", 18, SectorSize, true, nil))
	term := img[17*SectorSize:]
	term[0] = descriptorTerminator
	copy(term[1:], "CD001")
	term[6] = 1
	copy(img[18*SectorSize:], bytes.Join(rootRecords, nil))
	for lba, s := range sectors {
		copy(img[lba*SectorSize:], s)
	}
	return img
}

func encodeDirRecord(name string, lba, length uint32, dir bool, systemUse []byte) []byte {
	suStart := 33 + len(name) + (len(name)+1)%2
	r := make([]byte, suStart+len(systemUse))
	r[0] = byte(len(r))
	binary.LittleEndian.PutUint32(r[2:], lba)
	binary.LittleEndian.PutUint32(r[10:], length)
	if dir {
		r[25] = 0x02
	}
	r[32] = byte(len(name))
	copy(r[33:], name)
	copy(r[suStart:], systemUse)
	return r
}

func encodeNM(flags byte, name string) []byte {
	return append([]byte{'N', 'M', byte(5 + len(name)), 1, flags}, name...)
}

func encodeCE(block, offset, length uint32) []byte {
	e := make([]byte, 28)
	copy(e, "CE")
	e[2], e[3] = 28, 1
	binary.LittleEndian.PutUint32(e[4:], block)
	binary.LittleEndian.PutUint32(e[12:], offset)
	binary.LittleEndian.PutUint32(e[20:], length)
	return e
}

func TestRockRidgeContinuationAndHostileNames(t *testing.T) {
	rr := func(entries ...[]byte) []byte { return bytes.Join(entries, nil) }
	cont := append(encodeNM(0, "-name.json"), 'S', 'T', 4, 1)
	img := buildMiniISO([][]byte{
		encodeDirRecord("PLAIN.TXT;1", 30, 1, false, rr(encodeNM(0, "plain.txt"))),
		encodeDirRecord("SPLIT.TXT;1", 30, 1, false, rr(encodeNM(nmContinue, "split"), encodeNM(0, "-name.txt"))),
		encodeDirRecord("LONG.JSO;1", 30, 1, false, rr(encodeNM(nmContinue, "a-long"), encodeCE(20, 100, uint32(len(cont))))),
		encodeDirRecord("AWAY.TXT;1", 30, 1, false, rr(encodeNM(nmContinue, "away"), encodeCE(5000, 0, 10))),
		encodeDirRecord("LOOP.TXT;1", 30, 1, false, rr(encodeNM(nmContinue, "loop"), encodeCE(21, 0, 28))),
		encodeDirRecord("SLASH.TXT;1", 30, 1, false, rr(encodeNM(0, "../../etc/passwd"))),
		encodeDirRecord("DOTDOT.TXT;1", 30, 1, false, rr(encodeNM(0, ".."))),
		encodeDirRecord("CTRL.TXT;1", 30, 1, false, rr(encodeNM(0, "a\x1b[2Jb"))),
		encodeDirRecord("BADLEN.TXT;1", 30, 1, false, []byte{'N', 'M', 2, 1}),
		encodeDirRecord("SUB", 19, SectorSize, true, rr(encodeNM(0, "sub"))),
	}, map[uint32][]byte{
		19: encodeDirRecord("INNER.TXT;1", 30, 1, false, rr(encodeNM(0, "inner.txt"))),
		20: append(make([]byte, 100), cont...),
		21: encodeCE(21, 0, 28), // a continuation area that continues into itself
	})
	v := openTestVolume(t, img)
	got := map[string]string{}
	for _, e := range walkVolume(t, v) {
		got[e.Path] = e.DisplayPath
	}
	want := map[string]string{
		"PLAIN.TXT":     "plain.txt",
		"SPLIT.TXT":     "split-name.txt",
		"LONG.JSO":      "a-long-name.json",
		"AWAY.TXT":      "AWAY.TXT", // continuation area past the end of the file: ignored
		"LOOP.TXT":      "loop",     // bounded number of continuation areas
		"SLASH.TXT":     "SLASH.TXT",
		"DOTDOT.TXT":    "DOTDOT.TXT",
		"CTRL.TXT":      "CTRL.TXT",
		"BADLEN.TXT":    "BADLEN.TXT",
		"SUB":           "sub",
		"SUB/INNER.TXT": "sub/inner.txt",
	}
	if !maps.Equal(got, want) {
		t.Errorf("display paths %v, want %v", got, want)
	}
	if rec := mustLookup(t, v, "LONG.JSO"); rec.RockRidgeName != "a-long-name.json" {
		t.Errorf("Lookup(LONG.JSO).RockRidgeName = %q", rec.RockRidgeName)
	}
}

func TestWalkDepthLimit(t *testing.T) {
	// A chain of nested directories, one per sector from LBA 19.
	const levels = maxWalkDepth + 5
	sectors := map[uint32][]byte{}
	for i := uint32(0); i < levels; i++ {
		sectors[19+i] = encodeDirRecord("D", 20+i, SectorSize, true, nil)
	}
	sectors[19+levels] = nil
	v := openTestVolume(t, buildMiniISO([][]byte{encodeDirRecord("D", 19, SectorSize, true, nil)}, sectors))
	err := v.Walk(func(WalkEntry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "nested more than 64 levels") {
		t.Errorf("Walk: err %v, want nesting limit", err)
	}
	deep := strings.Repeat("D/", levels)
	if rec := mustLookup(t, v, deep); rec.LBA != 18+levels {
		t.Errorf("Lookup of a deep path: LBA %d, want %d", rec.LBA, 18+levels)
	}
}

// Directories whose extents overlap could make a walk read the same bytes over and over.
func TestWalkOverlappingDirectories(t *testing.T) {
	// 40 sibling directories all pointing into one large extent: each is read whole.
	var records [][]byte
	for i := range 40 {
		records = append(records, encodeDirRecord(fmt.Sprintf("D%02d", i), 19+uint32(i), 30*SectorSize, true, nil))
	}
	v := openTestVolume(t, buildMiniISO(records, map[uint32][]byte{19 + 70: nil}))
	err := v.Walk(func(WalkEntry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "overlapping directory extents") {
		t.Errorf("Walk: err %v, want overlapping extents refused", err)
	}
}
