package isobuilder

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// readerOnly hides every method but ReadAt, as a remote origin would offer.
type readerOnly struct{ r *bytes.Reader }

func (r readerOnly) ReadAt(p []byte, off int64) (int, error) { return r.r.ReadAt(p, off) }

// An ISO read through a plain io.ReaderAt parses like the same ISO opened as a file, and
// every sink writes the same bytes from it (through a buffer instead of the kernel).
func TestOpenReaderMatchesOpen(t *testing.T) {
	for _, name := range fixtures.CoreOSISOs {
		t.Run(name, func(t *testing.T) {
			data := fixtures.Bytes(t, name)
			fromFile, err := Open(fixtures.File(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer fromFile.Close()
			fromReader, err := OpenReader(readerOnly{bytes.NewReader(data)}, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			defer fromReader.Close()

			if _, ok := fromFile.Base().(*os.File); !ok {
				t.Errorf("Open's base is %T, want *os.File", fromFile.Base())
			}
			ff, fok := fromFile.Features()
			rf, rok := fromReader.Features()
			if fromFile.Volume().VolumeID != fromReader.Volume().VolumeID || !reflect.DeepEqual(fromFile.IgnitionArea(), fromReader.IgnitionArea()) ||
				!reflect.DeepEqual(fromFile.Kargs(), fromReader.Kargs()) || !reflect.DeepEqual(ff, rf) || fok != rok ||
				fromFile.HasMiniso() != fromReader.HasMiniso() || fromFile.Arch() != fromReader.Arch() || fromReader.Size() != int64(len(data)) {
				t.Fatalf("the two views differ")
			}

			files := initrd.Files{initrd.IgnitionPath: []byte(`{"ignition":{"version":"3.2.0"}}`)}
			dir := t.TempDir()
			var outputs [][]byte
			for i, iso := range []*LiveISO{fromFile, fromReader} {
				patch, err := iso.PayloadPatch(files)
				if err != nil {
					t.Fatal(err)
				}
				img, err := iso.Image(patch)
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, string(rune('a'+i))+".iso")
				if err := WriteFile(context.Background(), img, out, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				outputs = append(outputs, b)
			}
			if !bytes.Equal(outputs[0], outputs[1]) {
				t.Error("WriteFile wrote different bytes from the file and from the reader")
			}
			if bytes.Equal(outputs[1], data) {
				t.Error("the output does not hold the payload")
			}
		})
	}
}

// The view cannot be changed through what its accessors return.
func TestLiveISOAccessorsReturnCopies(t *testing.T) {
	iso := openLiveFixture(t, "embed-areas-2023-07.x86_64.iso")
	k := iso.Kargs()
	if k == nil || len(k.Areas) == 0 {
		t.Fatal("fixture has no kargs areas")
	}
	k.Default = "changed"
	k.Areas[0].Offset = 1
	if again := iso.Kargs(); again.Default == "changed" || again.Areas[0].Offset == 1 {
		t.Errorf("changing the returned kargs changed the ISO's: %+v", again)
	}
	f, ok := iso.Features()
	if !ok || len(f.InstallerConfigDirectives) == 0 {
		t.Fatal("fixture has no installer config directives")
	}
	for k := range f.InstallerConfigDirectives {
		delete(f.InstallerConfigDirectives, k)
	}
	if again, _ := iso.Features(); len(again.InstallerConfigDirectives) == 0 {
		t.Error("changing the returned features changed the ISO's")
	}
}

func TestOpenReaderRejectsNonISO(t *testing.T) {
	data := make([]byte, 64*SectorSize)
	if _, err := OpenReader(bytes.NewReader(data), int64(len(data))); err == nil {
		t.Error("zeros parsed as an ISO")
	}
	if _, err := OpenReader(bytes.NewReader(data), -1); err == nil {
		t.Error("negative size accepted")
	}
}
