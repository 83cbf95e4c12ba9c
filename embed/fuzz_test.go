package embed

import "testing"

func FuzzParseIgninfo(f *testing.F) {
	f.Add([]byte(`{"file": "images/ignition.img"}`))
	f.Add([]byte(`{"file": "images/cdboot.img", "length": 262144, "offset": 132096}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, off, length, err := ParseIgninfo(b)
		if err != nil {
			return
		}
		if file == "" || off != nil && *off < 0 || length != nil && *length < 0 {
			t.Fatalf("accepted %q as file %q offset %v length %v", b, file, off, length)
		}
	})
}

func FuzzParseFeatures(f *testing.F) {
	f.Add([]byte(`{"installer-config": true, "live-initrd-network": true}`))
	f.Add([]byte(`{"installer-config-directives": {"console": true}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseFeatures(b)
	})
}

// FuzzFindKargs feeds kargs.json and area bytes through the whole lookup and parse.
func FuzzFindKargs(f *testing.F) {
	f.Add([]byte(`{"default": "a b", "files": [{"end": "\n", "offset": 2, "pad": "#", "path": "a"}], "size": 20}`), []byte("xxa b\n###############"))
	f.Add([]byte(`{"default": "a", "files": [{"end": "\u0000", "offset": 0, "pad": "\u0000", "path": "a"}], "size": 8}`), []byte("a\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, kargsJSON, file []byte) {
		if len(kargsJSON) > 8192 || len(file) > 8192 {
			return
		}
		iso := newFake(40960 + 8192 + 8192)
		iso.put("COREOS/KARGS.JSO", 40960, kargsJSON)
		iso.put("A", 40960+8192, file)
		k, err := FindKargs(iso)
		if err != nil || k == nil {
			return
		}
		cur, err := k.Current(iso)
		if err != nil {
			return
		}
		for _, a := range k.Areas {
			b, err := k.Render(a, cur)
			if err != nil {
				continue
			}
			if int64(len(b)) != a.Length {
				t.Fatalf("rendered %d bytes for a %d-byte area", len(b), a.Length)
			}
		}
	})
}

// FuzzFindIgnitionArea feeds igninfo.json through the lookup: an area it accepts lies inside
// the file it names, whatever the offset and length (MaxInt64 included).
func FuzzFindIgnitionArea(f *testing.F) {
	f.Add([]byte(`{"file": "images/cdboot.img", "length": 65536, "offset": 4096}`))
	f.Fuzz(func(t *testing.T, igninfo []byte) {
		if len(igninfo) > 8192 {
			return
		}
		const fileOff, fileLen = 100000, 80000
		iso := newFake(200000)
		iso.put("COREOS/IGNINFO.JSO", 40960, igninfo)
		iso.put("IMAGES/CDBOOT.IMG", fileOff, make([]byte, fileLen))
		a, err := FindIgnitionArea(iso)
		if err != nil {
			return
		}
		if a.Offset < fileOff || a.Length <= 0 || a.Length > fileOff+fileLen-a.Offset {
			t.Fatalf("accepted area at %d, %d bytes, outside the file (%d bytes at %d)", a.Offset, a.Length, fileLen, fileOff)
		}
	})
}
