package isobuilder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// minisoFixtures are the fixtures with a miniso.dat, with the minimal ISO that section 8 of
// the spec records for each.
var minisoFixtures = []struct {
	iso    string
	size   int
	digest string
}{
	{"embed-areas-2021-12.iso", 722944, "df1ddfdb586c714e7f59d96f4bff582d13acc948a75bb0c4f29f4889806db226"},
	{"embed-areas-2023-07.x86_64.iso", 1048576, "b64f0261321433be7e437e95304481deb06736c19f052c3391b049d25d8f6411"},
	{"embed-areas-2023-07.s390x.iso", 929792, "f6a39f14b30e1919cc797cdc044fd926e08fde7df5b9b358609f651e970f97a0"},
}

// readMiniso decodes the COREOS/MINISO.DAT of an ISO image.
func readMiniso(t *testing.T, iso []byte) *embed.Miniso {
	t.Helper()
	vol, err := ReadVolume(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := vol.Lookup(embed.MinisoPath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := embed.DecodeMiniso(iso[rec.Offset() : rec.Offset()+int64(rec.Length)])
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustUnpackMinimal(t *testing.T, full []byte, m *embed.Miniso) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestUnpackMinimalFixtures(t *testing.T) {
	for _, tc := range minisoFixtures {
		t.Run(tc.iso, func(t *testing.T) {
			full := fixtures.Bytes(t, tc.iso)
			minimal := mustUnpackMinimal(t, full, readMiniso(t, full))
			if len(minimal) != tc.size {
				t.Errorf("minimal ISO is %d bytes, want %d", len(minimal), tc.size)
			}
			if sum := sha256.Sum256(minimal); hex.EncodeToString(sum[:]) != tc.digest {
				t.Errorf("minimal ISO SHA-256 %x, want %s", sum, tc.digest)
			}
			vol, err := ReadVolume(bytes.NewReader(minimal), int64(len(minimal)))
			if err != nil {
				t.Fatalf("the minimal ISO does not read as an ISO: %v", err)
			}
			for _, path := range []string{"IMAGES/PXEBOOT/ROOTFS.IMG", embed.MinisoPath} {
				if _, err := vol.Lookup(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("lookup of %s in the minimal ISO: %v, want not found", path, err)
				}
			}
			if _, err := vol.Lookup("COREOS/KARGS.JSO"); err != nil {
				t.Errorf("the minimal ISO lacks kargs.json: %v", err)
			}
		})
	}
}

func TestUnpackMinimalCorruptFull(t *testing.T) {
	orig := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	m := readMiniso(t, orig)
	full := slices.Clone(orig)
	full[415744] ^= 0xff // first byte of coreos/kargs.json, which the table takes from the full ISO
	err := UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, new(bytes.Buffer))
	want := "wrong final digest: expected b64f0261321433be7e437e95304481deb06736c19f052c3391b049d25d8f6411, found "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
}

type brokenOutput struct{}

func (brokenOutput) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestUnpackMinimalErrors(t *testing.T) {
	full := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	orig := readMiniso(t, full)
	for _, tc := range []struct {
		name   string
		modify func(m *embed.Miniso)
		keep   int // bytes of the full ISO that can be read, all when 0
		out    io.Writer
		want   string
	}{
		{"truncated xz", func(m *embed.Miniso) { m.XZPacked = m.XZPacked[:len(m.XZPacked)/2] }, 0, nil,
			"does not end with an xz footer"},
		{"huge dictionary", func(m *embed.Miniso) { m.XZPacked[12+4] = 40 }, 0, nil,
			"needs a 4294967295-byte dictionary"},
		{"corrupt xz data", func(m *embed.Miniso) { m.XZPacked[200] ^= 0x55 }, 0, nil, "xz stream fails at minimal ISO offset"},
		{"full extent past the end", func(m *embed.Miniso) { m.Entries[11].Full = 600 }, 0, nil,
			"385 bytes at full ISO offset 1228800 run past the end of the 1048576-byte full ISO"},
		{"full ISO shorter than its size", nil, 100000, nil, "reading 38912 bytes of the full ISO at offset 92160"},
		{"unsorted table", func(m *embed.Miniso) { m.Entries[0], m.Entries[1] = m.Entries[1], m.Entries[0] }, 0, nil,
			"entry 1 starts at minimal ISO offset 90112, inside the previous file"},
		{"output fails", nil, 0, brokenOutput{}, "writing minimal ISO: disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := *orig
			m.Entries, m.XZPacked = slices.Clone(orig.Entries), slices.Clone(orig.XZPacked)
			if tc.modify != nil {
				tc.modify(&m)
			}
			readable := full
			if tc.keep != 0 {
				readable = full[:tc.keep]
			}
			out := tc.out
			if out == nil {
				out = new(bytes.Buffer)
			}
			err := UnpackMinimal(bytes.NewReader(readable), int64(len(full)), &m, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestPackMinimalRoundTrip(t *testing.T) {
	for _, tc := range minisoFixtures {
		t.Run(tc.iso, func(t *testing.T) {
			full := fixtures.Bytes(t, tc.iso)
			coreos := readMiniso(t, full)
			minimal := mustUnpackMinimal(t, full, coreos)
			packed, err := PackMinimal(bytes.NewReader(full), int64(len(full)),
				bytes.NewReader(minimal), int64(len(minimal)), "sno-iso test")
			if err != nil {
				t.Fatal(err)
			}
			if len(packed) > 16384 {
				t.Errorf("packed miniso.dat is %d bytes, more than the 16384-byte file", len(packed))
			}
			m, err := embed.DecodeMiniso(packed)
			if err != nil {
				t.Fatal(err)
			}
			// The xz streams differ (another compressor), but the file pairing is a fact of the ISOs.
			if !slices.Equal(m.Entries, coreos.Entries) {
				t.Errorf("table\n got %v\nwant CoreOS's %v", m.Entries, coreos.Entries)
			}
			if m.AppVersion != "sno-iso test" {
				t.Errorf("app version %q", m.AppVersion)
			}
			if sum := sha256.Sum256(minimal); m.Digest != sum {
				t.Errorf("digest %x, want the minimal ISO's %x", m.Digest, sum)
			}
			if got := mustUnpackMinimal(t, full, m); !bytes.Equal(got, minimal) {
				t.Errorf("unpacking the packed table gives %d different bytes", len(got))
			}
			again, err := PackMinimal(bytes.NewReader(full), int64(len(full)),
				bytes.NewReader(minimal), int64(len(minimal)), "sno-iso test")
			if err != nil || !bytes.Equal(again, packed) {
				t.Errorf("packing again gives different bytes (err %v)", err)
			}
		})
	}
}

// xorrisoISO builds an ISO with xorriso from files (path → content), plus hard links (new path →
// existing path), which xorriso writes as records sharing one extent.
func xorrisoISO(t *testing.T, files map[string]string, hardlinks ...[2]string) []byte {
	t.Helper()
	xorriso := testenv.Tool(t, "xorriso", "xorriso")
	root := t.TempDir()
	dir := filepath.Join(root, "tree")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range hardlinks {
		if err := os.Link(filepath.Join(dir, l[1]), filepath.Join(dir, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	iso := filepath.Join(root, "out.iso")
	out, err := exec.Command(xorriso, "-as", "mkisofs", "-R", "-J", "--hardlinks", "-o", iso, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	b, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPackMinimalErrors(t *testing.T) {
	placeholder := strings.Repeat("\x00", 16384)
	fullFiles := map[string]string{
		"coreos/miniso.dat":         placeholder,
		"images/pxeboot/rootfs.img": strings.Repeat("rootfs", 1000),
		"kernel":                    "the kernel\n",
		"empty":                     "",
	}
	full := xorrisoISO(t, fullFiles)
	for _, tc := range []struct {
		name    string
		full    []byte
		minimal map[string]string
		want    string
	}{
		{"missing file", full, map[string]string{"kernel": "the kernel\n", "extra.cfg": "x"},
			"missing minimal file extra.cfg in full ISO"},
		{"length mismatch", full, map[string]string{"kernel": "the kernel!\n"},
			"file kernel has different lengths in full and minimal ISOs (11 and 12 bytes)"},
		{"content mismatch", full, map[string]string{"kernel": "the kerneL\n"},
			"does not unpack to the minimal ISO (do the files differ in content?): wrong final digest"},
		{"no miniso.dat", xorrisoISO(t, map[string]string{"kernel": "the kernel\n"}), map[string]string{"kernel": "the kernel\n"},
			"full ISO has no COREOS/MINISO.DAT"},
		{"does not fit", xorrisoISO(t, map[string]string{"kernel": "the kernel\n", "coreos/miniso.dat": "tiny"}),
			map[string]string{"kernel": "the kernel\n"}, "bytes, more than the 4 bytes of COREOS/MINISO.DAT in the full ISO"},
		{"only empty files", full, map[string]string{"empty": ""}, "file table is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			minimal := xorrisoISO(t, tc.minimal)
			packed, err := PackMinimal(bytes.NewReader(tc.full), int64(len(tc.full)),
				bytes.NewReader(minimal), int64(len(minimal)), "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (packed %d bytes), want one containing %q", err, len(packed), tc.want)
			}
		})
	}
}

func walkLBA(t *testing.T, iso []byte, displayPath string) uint32 {
	t.Helper()
	vol, err := ReadVolume(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	var lba uint32
	found := errors.New("found")
	err = vol.Walk(func(e WalkEntry) error {
		if e.DisplayPath == displayPath {
			lba = e.LBA
			return found
		}
		return nil
	})
	if err != found {
		t.Fatalf("%s not found in the ISO (walk: %v)", displayPath, err)
	}
	return lba
}

func TestPackMinimalSmallISOs(t *testing.T) {
	shared := [2]string{"link-b", "link-a"}
	full := xorrisoISO(t, map[string]string{
		"coreos/miniso.dat":         strings.Repeat("\x00", 16384),
		"images/pxeboot/rootfs.img": strings.Repeat("rootfs", 1000),
		"kernel":                    "the kernel\n",
		"link-a":                    "one extent, two names",
		"empty":                     "",
	}, shared)
	minimal := xorrisoISO(t, map[string]string{"kernel": "the kernel\n", "link-a": "one extent, two names", "empty": ""}, shared)
	if a, b := walkLBA(t, minimal, "link-a"), walkLBA(t, minimal, "link-b"); a != b {
		t.Fatalf("xorriso wrote the hard links at LBAs %d and %d, not one extent", a, b)
	}
	packed, err := PackMinimal(bytes.NewReader(full), int64(len(full)), bytes.NewReader(minimal), int64(len(minimal)), "test")
	if err != nil {
		t.Fatal(err)
	}
	m, err := embed.DecodeMiniso(packed)
	if err != nil {
		t.Fatal(err)
	}
	// The empty file is dropped and the hard links share one entry.
	if len(m.Entries) != 2 {
		t.Errorf("table %v, want one entry for the kernel and one for the hard-linked extent", m.Entries)
	}
	if got := mustUnpackMinimal(t, full, m); !bytes.Equal(got, minimal) {
		t.Error("unpacking does not reproduce the minimal ISO")
	}
}
