package embed

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// minisoFileLength is the size of the COREOS/MINISO.DAT placeholder in every fixture.
const minisoFileLength = 16384

func fixtureMinisoDat(t *testing.T, iso string, offset int) []byte {
	t.Helper()
	b := fixtures.Bytes(t, iso)
	if len(b) < offset+minisoFileLength {
		t.Fatalf("%s is %d bytes, too short for miniso.dat at %d", iso, len(b), offset)
	}
	return b[offset : offset+minisoFileLength]
}

func TestDecodeMinisoFixtures(t *testing.T) {
	for _, tc := range []struct {
		iso        string
		offset     int
		appVersion string
		entries    int
		digest     string
	}{
		{"embed-areas-2021-12.iso", 145408, "0.11.0", 12,
			"df1ddfdb586c714e7f59d96f4bff582d13acc948a75bb0c4f29f4889806db226"},
		{"embed-areas-2023-07.x86_64.iso", 417792, "0.17.0", 12,
			"b64f0261321433be7e437e95304481deb06736c19f052c3391b049d25d8f6411"},
		{"embed-areas-2023-07.s390x.iso", 473088, "0.17.0", 15,
			"f6a39f14b30e1919cc797cdc044fd926e08fde7df5b9b358609f651e970f97a0"},
	} {
		t.Run(tc.iso, func(t *testing.T) {
			raw := fixtureMinisoDat(t, tc.iso, tc.offset)
			m, err := DecodeMiniso(raw)
			if err != nil {
				t.Fatal(err)
			}
			if m.AppVersion != tc.appVersion {
				t.Errorf("app version %q, want %q", m.AppVersion, tc.appVersion)
			}
			if len(m.Entries) != tc.entries {
				t.Errorf("%d entries, want %d", len(m.Entries), tc.entries)
			}
			if got := hex.EncodeToString(m.Digest[:]); got != tc.digest {
				t.Errorf("digest %s, want %s", got, tc.digest)
			}
			// The CoreOS build writes xz with the CRC64 check: stream flags 00 04.
			if len(m.XZPacked) < 8 || !bytes.Equal(m.XZPacked[6:8], []byte{0, 4}) {
				t.Errorf("xzpacked does not start with an xz CRC64 stream header: % x", m.XZPacked[:min(8, len(m.XZPacked))])
			}
			enc, err := m.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, raw[:len(enc)]) {
				t.Errorf("re-encoding differs from the file's first %d bytes", len(enc))
			}
			if rest := raw[len(enc):]; len(bytes.Trim(rest, "\x00")) != 0 {
				t.Errorf("the %d bytes after the encoding are not all zero", len(rest))
			}
		})
	}
}

func TestDecodeMinisoTable2023x86(t *testing.T) {
	raw := fixtureMinisoDat(t, "embed-areas-2023-07.x86_64.iso", 417792)
	m, err := DecodeMiniso(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []MinisoEntry{
		{44, 44, 2048}, {45, 45, 38912}, {64, 64, 12}, {65, 65, 116}, {66, 66, 3082},
		{68, 68, 262144}, {196, 196, 12}, {197, 198, 11}, {198, 199, 2192}, {200, 201, 660},
		{201, 202, 36}, {202, 203, 385},
	}
	if !reflect.DeepEqual(m.Entries, want) {
		t.Errorf("entries\n got %v\nwant %v", m.Entries, want)
	}
	if len(m.XZPacked) != 2560 {
		t.Errorf("xz blob is %d bytes, want 2560", len(m.XZPacked))
	}
	enc, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != 2664 {
		t.Errorf("encoding is %d bytes, want 2664", len(enc))
	}
	head := append([]byte("MINISO\x00\x00\x01\x060.17.0\x0c"), 0x2c, 0x2c, 0xfb, 0x00, 0x08)
	if !bytes.HasPrefix(enc, head) {
		t.Errorf("encoding starts % x, want % x", enc[:len(head)], head)
	}
}

func sampleMiniso() *Miniso {
	m := &Miniso{
		AppVersion: "sno-iso test",
		Entries:    []MinisoEntry{{16, 20, 300}, {17, 21, 2048}, {40, 90, 70000}, {300, 300, 0}},
		XZPacked:   []byte("not really xz"),
	}
	for i := range m.Digest {
		m.Digest[i] = byte(i)
	}
	return m
}

func TestMinisoRoundTrip(t *testing.T) {
	m := sampleMiniso()
	enc, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// 300 and 2048 need the u16 marker, 70000 the u32 marker.
	if !bytes.Contains(enc, []byte{0xfb, 0x2c, 0x01}) || !bytes.Contains(enc, []byte{0xfc, 0x70, 0x11, 0x01, 0x00}) {
		t.Errorf("encoding lacks the expected varints: % x", enc)
	}
	got, err := DecodeMiniso(append(enc, "trailing bytes are allowed"...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, m)
	}
}

func TestDecodeMinisoAcceptsWideVarints(t *testing.T) {
	// bincode decodes a value stored with a wider marker than needed.
	m := sampleMiniso()
	enc, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	wide := bytes.Replace(enc, []byte("MINISO\x00\x00\x01"), []byte("MINISO\x00\x00\xfd\x01\x00\x00\x00\x00\x00\x00\x00"), 1)
	got, err := DecodeMiniso(wide)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("decoded %+v, want %+v", got, m)
	}
}

func TestDecodeMinisoErrors(t *testing.T) {
	valid, err := sampleMiniso().Encode()
	if err != nil {
		t.Fatal(err)
	}
	header := "MINISO\x00\x00\x01\x01x"
	digest := strings.Repeat("\x00", 32)
	for _, tc := range []struct {
		name  string
		input []byte
		want  string
	}{
		{"empty", nil, "not a miniso file"},
		{"bad magic", []byte("MINIS0\x00\x00\x01\x00"), "not a miniso file"},
		{"version 2", []byte("MINISO\x00\x00\x02\x05futur"), "incompatible miniso file version: 1 vs 2 (created by futur)"},
		{"empty table", []byte(header + "\x00" + digest + "\x00"), "file table is empty"},
		{"overlap", []byte(header + "\x02" + "\x10\x10\xfb\x01\x08" + "\x11\x11\x01" + digest + "\x00"),
			"files at offsets 32768 and 34816 overlap"},
		{"unsorted", []byte(header + "\x02" + "\x11\x11\x01" + "\x10\x10\x01" + digest + "\x00"),
			"files at offsets 34816 and 32768 overlap"},
		{"truncated", valid[:len(valid)-1], "truncated: xzpacked"},
		{"truncated digest", []byte(header + "\x01\x10\x10\x01" + digest[:31]), "truncated: digest"},
		{"count beyond input", []byte(header + "\xfc\xff\xff\xff\x00"), "entry count 16777215"},
		{"invalid marker", []byte("MINISO\x00\x00\xff"), "invalid varint marker 255"},
		{"u128", []byte("MINISO\x00\x00\xfe"), "128-bit"},
		{"LBA over u32", []byte(header + "\x01\xfd\x00\x00\x00\x00\x01\x00\x00\x00"), "entry 0 minimal at offset 12 is 4294967296"},
		{"bad UTF-8", []byte("MINISO\x00\x00\x01\x01\xff"), "not valid UTF-8"},
		{"size limit", append([]byte(header+"\x01\x10\x10\x01"+digest+"\xfc\x00\x00\x20\x00"), make([]byte, 2<<20)...),
			"data size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeMiniso(tc.input)
			if err == nil {
				t.Fatalf("decoded %+v, want an error containing %q", m, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestEncodeMinisoErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*Miniso)
		want   string
	}{
		{"empty table", func(m *Miniso) { m.Entries = nil }, "file table is empty"},
		{"overlap", func(m *Miniso) { m.Entries[0].Length = 2049 }, "files at offsets 32768 and 34816 overlap"},
		{"bad UTF-8", func(m *Miniso) { m.AppVersion = "\xff" }, "not valid UTF-8"},
		{"too big", func(m *Miniso) { m.XZPacked = make([]byte, 1<<20) }, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sampleMiniso()
			tc.modify(m)
			_, err := m.Encode()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
