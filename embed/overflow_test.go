package embed

import (
	"strings"
	"testing"
)

// TestAreaOffsetsDoNotOverflow: offsets and lengths near MaxInt64 are refused with an error
// naming the file: offset+length must not wrap negative and pass the bounds check.
func TestAreaOffsetsDoNotOverflow(t *testing.T) {
	const maxInt64 = "9223372036854775807"
	t.Run("igninfo length", func(t *testing.T) {
		iso := newFake(200000)
		iso.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "images/ignition.img", "offset": 1, "length": `+maxInt64+`}`))
		iso.put("IMAGES/IGNITION.IMG", 100000, make([]byte, 4096))
		if _, err := FindIgnitionArea(iso); err == nil || !strings.Contains(err.Error(), "runs past the end of images/ignition.img") {
			t.Fatalf("got %v, want the area refused", err)
		}
	})
	t.Run("igninfo offset", func(t *testing.T) {
		iso := newFake(200000)
		iso.put("COREOS/IGNINFO.JSO", 40960, []byte(`{"file": "images/ignition.img", "offset": `+maxInt64+`, "length": 1}`))
		iso.put("IMAGES/IGNITION.IMG", 100000, make([]byte, 4096))
		if _, err := FindIgnitionArea(iso); err == nil || !strings.Contains(err.Error(), "past the end of images/ignition.img") {
			t.Fatalf("got %v, want the area refused", err)
		}
	})
	t.Run("kargs.json offset", func(t *testing.T) {
		iso := newFake(200000)
		iso.put("COREOS/KARGS.JSO", 40960, []byte(`{"default": "a", "files": [{"path": "a", "offset": `+maxInt64+`}], "size": 100}`))
		iso.put("A", 100000, make([]byte, 4096))
		if _, err := FindKargs(iso); err == nil || !strings.Contains(err.Error(), "runs past its end") {
			t.Fatalf("got %v, want the area refused", err)
		}
	})
	t.Run("readSpan", func(t *testing.T) {
		iso := newFake(200000)
		if _, err := readSpan(iso, 1, 1<<63-1, "test span"); err == nil || !strings.Contains(err.Error(), "lies outside the ISO") {
			t.Fatalf("got %v, want the span refused", err)
		}
	})
}
