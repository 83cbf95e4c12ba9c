package isobuilder

import (
	"errors"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

func TestKargsPatches(t *testing.T) {
	l, err := Open(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	kargs := l.kargs.Default + " ip=dhcp"
	patches, err := l.KargsPatches(kargs)
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) != len(l.kargs.Areas) {
		t.Fatalf("%d patches for %d areas", len(patches), len(l.kargs.Areas))
	}
	img, err := l.Image(patches...)
	if err != nil {
		t.Fatal(err)
	}
	// Read back through the same parser that reads ISOs: every area holds the new kargs.
	for _, a := range l.kargs.Areas {
		b := make([]byte, a.Length)
		if _, err := img.ReadAt(b, a.Offset); err != nil {
			t.Fatal(err)
		}
		if got, err := embed.ParseKargsArea(b, a.Pad, a.Terminator); err != nil || got != kargs {
			t.Errorf("area at %d reads %q, %v", a.Offset, got, err)
		}
	}

	_, err = l.KargsPatches(strings.Repeat("x", l.kargs.Size))
	if err == nil || !strings.Contains(err.Error(), "kargs too large for area") {
		t.Fatalf("oversized kargs: %v", err)
	}
}

func TestKargsPatchesWithoutAreas(t *testing.T) {
	l, err := Open(fixtures.File(t, "embed-areas-2020-09.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.KargsPatches("a"); !errors.Is(err, embed.ErrNoKargs) {
		t.Fatalf("error %v, want embed.ErrNoKargs", err)
	}
}
