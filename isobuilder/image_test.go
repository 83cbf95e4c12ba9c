package isobuilder

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// applyPatches is the reference the Image is checked against: the whole base in memory with
// the patches copied over it.
func applyPatches(base []byte, patches []Patch) []byte {
	out := bytes.Clone(base)
	for _, p := range patches {
		copy(out[p.Offset:], p.Data)
	}
	return out
}

func filled(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

func TestReadAtEveryBoundary(t *testing.T) {
	base := make([]byte, 100)
	for i := range base {
		base[i] = byte(i)
	}
	patches := []Patch{
		{Offset: 97, Data: filled(3, 0xE0)}, // the end of the image
		{Offset: 0, Data: filled(3, 0xA0)},  // the start
		{Offset: 10, Data: filled(5, 0xB0)}, // two adjacent patches
		{Offset: 15, Data: filled(5, 0xC0)},
		{Offset: 40, Data: filled(1, 0xD0)}, // a single byte
	}
	img, err := NewImage(bytes.NewReader(base), int64(len(base)), patches...)
	if err != nil {
		t.Fatal(err)
	}
	want := applyPatches(base, patches)
	for off := 0; off <= len(base)+1; off++ {
		for length := 0; length <= len(base)+5; length++ {
			p := make([]byte, length)
			n, err := img.ReadAt(p, int64(off))
			wantN := max(0, min(length, len(base)-off))
			if n != wantN {
				t.Fatalf("ReadAt(len %d, off %d) = %d bytes, want %d", length, off, n, wantN)
			}
			if wantN > 0 && !bytes.Equal(p[:n], want[off:off+n]) {
				t.Fatalf("ReadAt(len %d, off %d) = %x, want %x", length, off, p[:n], want[off:off+n])
			}
			switch {
			case off >= len(base) || n < length:
				if err != io.EOF {
					t.Fatalf("ReadAt(len %d, off %d): error %v, want io.EOF", length, off, err)
				}
			case err != nil:
				t.Fatalf("ReadAt(len %d, off %d): %v", length, off, err)
			}
		}
	}
}

func TestReadAtErrors(t *testing.T) {
	img, err := NewImage(bytes.NewReader(make([]byte, 10)), 20, Patch{Offset: 15, Data: filled(5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at offset -1 succeeded")
	}
	// The base has 10 bytes but claims 20: reading past its end is an error, not zeros.
	n, err := img.ReadAt(make([]byte, 20), 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 10 {
		t.Errorf("ReadAt over a short base = %d, %v; want 10, unexpected EOF", n, err)
	}
	if err != nil && !strings.Contains(err.Error(), "offset 10") {
		t.Errorf("error %q does not name offset 10", err)
	}
}

func TestNewImageRejects(t *testing.T) {
	base := bytes.NewReader(make([]byte, 100))
	tests := []struct {
		name    string
		patches []Patch
		want    []string // substrings of the error
	}{
		{"negative offset", []Patch{{Offset: -1, Data: []byte{1}}}, []string{"offset -1"}},
		{"past the end", []Patch{{Offset: 98, Data: filled(3, 1)}}, []string{"offset 98", "size 100"}},
		{"starts after the end", []Patch{{Offset: 101}}, []string{"offset 101"}},
		{"overlap", []Patch{{Offset: 50, Data: filled(5, 1)}, {Offset: 10, Data: filled(41, 1)}}, []string{"offset 10", "offset 50"}},
		{"same offset", []Patch{{Offset: 20, Data: filled(1, 1)}, {Offset: 20, Data: filled(1, 2)}}, []string{"offset 20"}},
		{"contained", []Patch{{Offset: 0, Data: filled(50, 1)}, {Offset: 10, Data: filled(1, 2)}}, []string{"offset 0", "offset 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewImage(base, 100, tt.patches...)
			if err == nil {
				t.Fatal("NewImage succeeded")
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	if _, err := NewImage(base, -1); err == nil {
		t.Error("NewImage with size -1 succeeded")
	}
	if _, err := NewImage(nil, 0); err == nil {
		t.Error("NewImage without a base succeeded")
	}
}

func TestWithRejectsOverlapWithEarlierPatch(t *testing.T) {
	img, err := NewImage(bytes.NewReader(make([]byte, 100)), 100, Patch{Offset: 10, Data: filled(10, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.With(Patch{Offset: 19, Data: filled(2, 2)}); err == nil || !strings.Contains(err.Error(), "offset 19") {
		t.Errorf("With overlapping the earlier patch: error %v, want one naming offset 19", err)
	}
	adjacent, err := img.With(Patch{Offset: 20, Data: filled(2, 2)}, Patch{Offset: 8, Data: filled(2, 3)})
	if err != nil {
		t.Fatalf("With adjacent patches: %v", err)
	}
	var offsets []int64
	for _, p := range adjacent.Patches() {
		offsets = append(offsets, p.Offset)
	}
	if want := []int64{8, 10, 20}; !slices.Equal(offsets, want) {
		t.Errorf("patch offsets %v, want %v", offsets, want)
	}
	if len(img.Patches()) != 1 {
		t.Errorf("With changed the original image: %d patches", len(img.Patches()))
	}
}

func TestImageIsImmutable(t *testing.T) {
	data := []byte("patch")
	img, err := NewImage(bytes.NewReader(make([]byte, 10)), 10, Patch{Offset: 2, Data: data}, Patch{Offset: 9})
	if err != nil {
		t.Fatal(err)
	}
	data[0] = 'X'
	img.Patches()[0].Data[1] = 'Y'
	got := make([]byte, 10)
	if _, err := img.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if want := "\x00\x00patch\x00\x00\x00"; string(got) != want {
		t.Errorf("image bytes %q after changing the caller's slices, want %q", got, want)
	}
	if n := len(img.Patches()); n != 1 {
		t.Errorf("%d patches, want 1 (the empty patch changes nothing)", n)
	}
}
