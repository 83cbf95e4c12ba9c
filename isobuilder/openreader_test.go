package isobuilder

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestOpenReaderParsesLikeOpen: an ISO read through any io.ReaderAt (here a section reader,
// not a file) parses to the same view as Open, and its images read the same bytes.
func TestOpenReaderParsesLikeOpen(t *testing.T) {
	path := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	fromFile, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fromFile.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := io.NewSectionReader(f, 0, fromFile.Size())
	fromReader, err := OpenReader(r, fromFile.Size())
	if err != nil {
		t.Fatal(err)
	}
	if fromReader.File() != nil {
		t.Error("File() is not nil for a reader that is not a file")
	}
	if !reflect.DeepEqual(fromReader.Ignition, fromFile.Ignition) || !reflect.DeepEqual(fromReader.Kargs, fromFile.Kargs) ||
		!reflect.DeepEqual(fromReader.Features, fromFile.Features) || fromReader.Arch != fromFile.Arch || fromReader.Volume.VolumeID != fromFile.Volume.VolumeID {
		t.Fatal("OpenReader parsed a different view than Open")
	}
	patch := Patch{Offset: fromFile.Ignition.Offset, Data: []byte("payload")}
	want, got := readImage(t, fromFile, patch), readImage(t, fromReader, patch)
	if !bytes.Equal(got, want) {
		t.Error("the image over the reader differs from the image over the file")
	}
	if err := fromReader.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err != nil {
		t.Errorf("Close closed the caller's reader: %v", err)
	}
	if _, err := OpenReader(bytes.NewReader(make([]byte, 64<<10)), 64<<10); err == nil {
		t.Error("zeros parsed as a live ISO")
	}
}

func readImage(t *testing.T, iso *LiveISO, patches ...Patch) []byte {
	t.Helper()
	img, err := iso.Image(patches...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(io.NewSectionReader(img, 0, img.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
