package embed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// fakeISO is an in-memory ISO whose files are declared by path, offset and length.
type fakeISO struct {
	data  []byte
	files map[string][2]int64
}

func (f *fakeISO) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.data)) {
		return 0, fmt.Errorf("read past end")
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, fmt.Errorf("short read")
	}
	return n, nil
}

func (f *fakeISO) Size() int64 { return int64(len(f.data)) }

func (f *fakeISO) Locate(path string) (int64, int64, error) {
	if s, ok := f.files[path]; ok {
		return s[0], s[1], nil
	}
	return 0, 0, fmt.Errorf("no record for %s: %w", path, fs.ErrNotExist)
}

// put places a file's content at off and declares it.
func (f *fakeISO) put(path string, off int64, content []byte) {
	copy(f.data[off:], content)
	f.files[path] = [2]int64{off, int64(len(content))}
}

func newFake(size int) *fakeISO {
	return &fakeISO{data: make([]byte, size), files: map[string][2]int64{}}
}

func TestIgnitionAreaFromIgninfo(t *testing.T) {
	iso := newFake(200000)
	iso.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "images/cdboot.img", "length": 65536, "offset": 4096}`))
	iso.put("IMAGES/CDBOOT.IMG", 100000, make([]byte, 4096+65536))
	a, err := FindIgnitionArea(iso)
	if err != nil {
		t.Fatal(err)
	}
	if a.Offset != 104096 || a.Length != 65536 || a.File != "IMAGES/CDBOOT.IMG" || a.Source != "coreos/igninfo.json" {
		t.Fatalf("area = %+v", a)
	}
}

func TestIgnitionAreaDefaultsToRestOfFile(t *testing.T) {
	iso := newFake(400000)
	iso.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "images/ignition.img"}`))
	iso.put("IMAGES/IGNITION.IMG", 65536, make([]byte, 262144))
	a, err := FindIgnitionArea(iso)
	if err != nil {
		t.Fatal(err)
	}
	if a.Offset != 65536 || a.Length != 262144 {
		t.Fatalf("area = %+v", a)
	}
}

func TestIgnitionAreaFallsBackToIgnitionImg(t *testing.T) {
	iso := newFake(400000)
	iso.put("IMAGES/IGNITION.IMG", 65536, make([]byte, 262144))
	binary.LittleEndian.PutUint64(iso.data[legacyIgnHeaderOff+8:], 65536)
	binary.LittleEndian.PutUint64(iso.data[legacyIgnHeaderOff+16:], 262144)
	copy(iso.data[legacyIgnHeaderOff:], legacyIgnMagic)
	a, err := FindIgnitionArea(iso)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != "images/ignition.img" || a.Offset != 65536 || a.Length != 262144 {
		t.Fatalf("area = %+v", a)
	}
	if a.Legacy == nil || a.Legacy.Offset != a.Offset || a.Legacy.Length != a.Length {
		t.Fatalf("legacy header = %+v, want the same span", a.Legacy)
	}
}

func TestIgnitionAreaErrors(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(*fakeISO)
		wantErr string
	}{
		{"no area", func(*fakeISO) {}, "Unrecognized CoreOS ISO image"},
		{"igninfo names missing file", func(f *fakeISO) {
			f.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "images/nope.img"}`))
		}, "Unrecognized CoreOS ISO image"},
		{"igninfo not json", func(f *fakeISO) {
			f.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": `))
		}, "parsing coreos/igninfo.json"},
		{"igninfo without file", func(f *fakeISO) {
			f.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"offset": 3}`))
		}, `no "file"`},
		{"offset past file", func(f *fakeISO) {
			f.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "a", "offset": 5000}`))
			f.put("A", 50000, make([]byte, 4096))
		}, "past the end of a"},
		{"length past file", func(f *fakeISO) {
			f.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "a", "offset": 10, "length": 4096}`))
			f.put("A", 50000, make([]byte, 4096))
		}, "runs past the end"},
		{"area past iso", func(f *fakeISO) {
			f.files["IMAGES/IGNITION.IMG"] = [2]int64{90000, 262144}
		}, "incomplete"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			iso := newFake(100000)
			c.setup(iso)
			_, err := FindIgnitionArea(iso)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
	if _, err := FindIgnitionArea(newFake(100000)); !errors.Is(err, ErrNotLiveISO) {
		t.Fatalf("missing area error %v is not ErrNotLiveISO", err)
	}
}

// kargsISO builds an ISO with two kargs areas described by kargs.json.
func kargsISO(t *testing.T, kargsJSON string, areas map[string]string) *fakeISO {
	t.Helper()
	iso := newFake(100000)
	iso.put("COREOS/KARGS.JSO", 40960, []byte(kargsJSON))
	off := int64(50000)
	for path, content := range areas {
		iso.put(path, off, []byte(content))
		off += 10000
	}
	return iso
}

func area(kargs string, end, pad byte, size int) string {
	return kargs + string(end) + strings.Repeat(string(pad), size-len(kargs)-1)
}

func TestKargsFromJSON(t *testing.T) {
	def := "coreos.liveiso=x ignition.firstboot"
	j := `{"default": "` + def + `", "files": [{"end": "\n", "offset": 10, "pad": "#", "path": "EFI/fedora/grub.cfg"}, {"offset": 4, "path": "isolinux/isolinux.cfg"}], "size": 100}`
	iso := kargsISO(t, j, map[string]string{
		"EFI/FEDORA/GRUB.CFG":   "0123456789" + area(def+" foo", '\n', '#', 100) + "# COREOS_KARG_EMBED_AREA\n",
		"ISOLINUX/ISOLINUX.CFG": "abcd" + area(def+" foo", '\n', '#', 100),
	})
	k, err := FindKargs(iso)
	if err != nil {
		t.Fatal(err)
	}
	if k.Default != def || k.Size != 100 || len(k.Areas) != 2 || k.Source != "coreos/kargs.json" {
		t.Fatalf("kargs = %+v", k)
	}
	if k.Areas[0].Offset > k.Areas[1].Offset {
		t.Fatal("areas are not sorted by offset")
	}
	cur, err := k.Current(iso)
	if err != nil {
		t.Fatal(err)
	}
	if cur != def+" foo" {
		t.Fatalf("current kargs = %q", cur)
	}
}

func TestKargsDisagreeingAreas(t *testing.T) {
	j := `{"default": "a", "files": [{"offset": 0, "path": "a"}, {"offset": 0, "path": "b"}], "size": 10}`
	iso := kargsISO(t, j, map[string]string{"A": area("a", '\n', '#', 10), "B": area("b", '\n', '#', 10)})
	k, err := FindKargs(iso)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Current(iso); err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Fatalf("error = %v, want areas disagree", err)
	}
}

func TestKargsErrors(t *testing.T) {
	cases := map[string]string{
		`{"default": "a", "files": [], "size": 4096}`:                                      "not between 1 and 2048",
		`{"default": "abcdef", "files": [], "size": 4}`:                                    "larger than the areas",
		`{"default": "a", "files": [], "size": 10}`:                                        "lists no karg embed areas",
		`{"default": "a", "files": [{"offset": 0, "path": "zz"}], "size": 10}`:             "names zz",
		`{"default": "a", "files": [{"offset": 5, "path": "a"}], "size": 10}`:              "runs past its end",
		`{"default": "a", "files": [{"offset": 0, "path": "a", "pad": "##"}], "size": 10}`: "not a single byte",
		`[1,2]`: "parsing coreos/kargs.json",
	}
	for j, want := range cases {
		iso := kargsISO(t, j, map[string]string{"A": area("a", '\n', '#', 10)})
		if _, err := FindKargs(iso); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("kargs.json %s: error = %v, want %q", j, err, want)
		}
	}
}

func TestKargsUnsupported(t *testing.T) {
	k, err := FindKargs(newFake(100000))
	if err != nil || k != nil {
		t.Fatalf("FindKargs on an ISO without areas = %v, %v; want nil, nil", k, err)
	}
}

func TestKargsFromLegacyHeader(t *testing.T) {
	iso := newFake(100000)
	def := "random.trust_cpu=on coreos.liveiso=rhcos-47 ignition.firstboot"
	const size = 200
	copy(iso.data[40000:], area(def, '\n', '#', size))
	copy(iso.data[50000:], area(def+" x=1", '\n', '#', size))
	copy(iso.data[60000:], area(def+" x=1", '\n', '#', size))
	h := iso.data[legacyKargsOff:]
	copy(h, legacyKargsMagic)
	binary.LittleEndian.PutUint64(h[8:], size)
	binary.LittleEndian.PutUint64(h[16:], 40000)
	binary.LittleEndian.PutUint64(h[24:], 60000)
	binary.LittleEndian.PutUint64(h[32:], 50000)
	k, err := FindKargs(iso)
	if err != nil {
		t.Fatal(err)
	}
	if k.Default != def || len(k.Areas) != 2 || k.Areas[0].Offset != 50000 || k.Source != "coreKarg header" {
		t.Fatalf("kargs = %+v", k)
	}
	if cur, err := k.Current(iso); err != nil || cur != def+" x=1" {
		t.Fatalf("current = %q, %v", cur, err)
	}
}

func TestKargsRender(t *testing.T) {
	k := &Kargs{Size: 12}
	hash := KargsArea{Pad: '#', Terminator: '\n'}
	nul := KargsArea{Pad: 0, Terminator: 0}
	b, err := k.Render(hash, " a=1 b ")
	if err != nil || string(b) != "a=1 b\n######" {
		t.Fatalf("Render = %q, %v", b, err)
	}
	b, err = k.Render(nul, "a=1 b")
	if err != nil || !bytes.Equal(b, append([]byte("a=1 b"), make([]byte, 7)...)) {
		t.Fatalf("Render NUL = %q, %v", b, err)
	}
	if _, err := k.Render(hash, strings.Repeat("x", 11)); err != nil {
		t.Fatalf("11 bytes in a 12-byte area: %v", err)
	}
	if _, err := k.Render(hash, strings.Repeat("x", 12)); err == nil || !strings.Contains(err.Error(), "kargs too large for area: 13 vs 12") {
		t.Fatalf("12 bytes in a 12-byte area: %v", err)
	}
	if got, err := ParseKargsArea(b, 0, 0); err != nil || got != "a=1 b" {
		t.Fatalf("parse of the NUL-padded area = %q, %v", got, err)
	}
}

func TestParseKargsAreaRejectsInvalidUTF8(t *testing.T) {
	if _, err := ParseKargsArea([]byte{'a', 0xff, '\n', '#'}, '#', '\n'); err == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
}

func TestFeatures(t *testing.T) {
	iso := newFake(100000)
	if f, found, err := FindFeatures(iso); err != nil || found || f.LiveInitrdNetwork {
		t.Fatalf("no features.json: %+v %v %v", f, found, err)
	}
	iso.put("COREOS/FEATURES.JSO", 40960, []byte(`{"installer-config": true, "installer-config-directives": {"console": true}, "live-initrd-network": true, "future": 3}`))
	f, found, err := FindFeatures(iso)
	if err != nil || !found || !f.InstallerConfig || !f.LiveInitrdNetwork || !f.InstallerConfigDirectives["console"] {
		t.Fatalf("features = %+v %v %v", f, found, err)
	}
	if _, err := ParseFeatures([]byte(`{"live-initrd-network": "yes"}`)); err == nil {
		t.Fatal("a string for a bool feature was accepted")
	}
}

func TestOversizedMetadataFileRefused(t *testing.T) {
	iso := newFake(100000)
	iso.files["COREOS/FEATURES.JSO"] = [2]int64{0, 2 << 20}
	if _, _, err := FindFeatures(iso); err == nil || !strings.Contains(err.Error(), "corrupt ISO") {
		t.Fatalf("error = %v", err)
	}
}
