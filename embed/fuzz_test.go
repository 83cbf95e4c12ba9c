package embed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

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
	f.Add([]byte(`{"Live-Initrd-Network": true, "installer-config": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseFeatures(b)
		want, wantErr := referenceFeatures(b)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: ParseFeatures error %v, the reference's %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: ParseFeatures = %+v, the reference reads %+v", b, got, want)
		}
	})
}

// referenceFeatures reads features.json token by token, as coreos-installer's reader has it
// and apart from ParseFeatures: the keys match exactly, unknown keys are skipped, a known key
// with a value of the wrong type is an error, a key given twice counts as its last value.
func referenceFeatures(b []byte) (Features, error) {
	var f Features
	dec := json.NewDecoder(bytes.NewReader(b))
	first, err := dec.Token()
	if err != nil {
		return Features{}, err
	}
	if first != nil && first != json.Delim('{') { // null sets nothing, as for any JSON value
		return Features{}, fmt.Errorf("not an object: %v", first)
	}
	for first != nil && dec.More() {
		key, err := dec.Token()
		if err != nil {
			return Features{}, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Features{}, err
		}
		switch key {
		case "installer-config":
			err = json.Unmarshal(raw, &f.InstallerConfig)
		case "live-initrd-network":
			err = json.Unmarshal(raw, &f.LiveInitrdNetwork)
		case "installer-config-directives":
			var directives map[string]bool
			err = json.Unmarshal(raw, &directives)
			f.InstallerConfigDirectives = directives
		}
		if err != nil {
			return Features{}, err
		}
	}
	if first != nil {
		if _, err := dec.Token(); err != nil { // the closing brace
			return Features{}, err
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Features{}, fmt.Errorf("data after the object: %v", err)
	}
	return f, nil
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

// FuzzModifyKargs checks the editor's invariants on any input: a trimmed result without new
// control characters, appends that show up, and append-then-delete of a new karg giving back
// a normalized command line exactly (what `kargs modify -a X` then `-d X` relies on to
// restore the pristine ISO).
func FuzzModifyKargs(f *testing.F) {
	f.Add(fcosKargs, "foobar=oldval", "dodo", "foobar=oldval=newval")
	f.Add("a a", "b", "a", "a=b=c")
	f.Add("", " ", "", "==")
	f.Add("console=ttyS0,115200n8 ip=dhcp", "rd.neednet=1", "ip=dhcp", "console=ttyS0,115200n8=tty0")
	f.Fuzz(func(t *testing.T, current, add, del, repl string) {
		got, err := ModifyKargs(current, []string{add}, []string{del}, []string{repl})
		if err != nil {
			return
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("result %q is not trimmed", got)
		}
		if utf8.ValidString(current) && !utf8.ValidString(got) {
			t.Fatalf("valid UTF-8 %q became %q", current, got)
		}
		if !strings.ContainsRune(add, '=') && !strings.ContainsFunc(repl, unicode.IsSpace) {
			// A replace without spaces changes one whole karg holding '=': never the append.
			if a := strings.TrimSpace(add); !strings.Contains(got, a) {
				t.Fatalf("append %q missing from %q", a, got)
			}
		}

		normalized := strings.Join(strings.Fields(current), " ")
		karg := strings.TrimSpace(add)
		if karg == "" || strings.ContainsFunc(karg, func(r rune) bool { return r == ' ' || r < 0x20 }) ||
			strings.Contains(" "+normalized+" ", " "+karg+" ") || normalized != current {
			return
		}
		added, err := ModifyKargs(current, []string{karg}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ModifyKargs(added, nil, []string{karg}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if back != normalized {
			t.Fatalf("append then delete of %q: %q -> %q -> %q", karg, current, added, back)
		}
	})
}

func FuzzDecodeMiniso(f *testing.F) {
	valid, err := sampleMiniso().Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte("MINISO\x00\x00\x02\x05futur"))
	f.Add([]byte("MINISO\x00\x00\x01\x00\x01\xfb\x00\x01\xfc\x00\x00\x00\x01\xfd\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMiniso(b)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded %+v but cannot encode it: %v", m, err)
		}
		again, err := DecodeMiniso(enc)
		if err != nil {
			t.Fatalf("cannot decode the re-encoding: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip\n got %+v\nwant %+v", again, m)
		}
	})
}

func FuzzFormatKargsJSON(f *testing.F) {
	f.Add([]byte(`{"default": "a coreos.liveiso=x", "files": [{"path": "EFI/fedora/grub.cfg", "offset": 970, "pad": "#", "end": "\n"}], "size": 1139}`))
	f.Add([]byte(`{"default": "a", "files": [{"path": "images/cdboot.img", "offset": 66688, "pad": "\u0000", "end": "\u0000"}], "size": 896}   `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := FormatKargsJSON(raw, "new \"default\"\x01")
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
