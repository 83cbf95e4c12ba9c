package isobuilder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// An edited image written to a new file is the owner's only, whatever the umask: an ISO may
// carry a config, which holds the cluster's private keys.
func ExampleOutput() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	base := bytes.Repeat([]byte{0}, 4096)
	img, err := isobuilder.NewImage(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "sno.iso")
	if err := (isobuilder.Output{File: out}).Write(context.Background(), img); err != nil {
		log.Fatal(err)
	}
	info, err := os.Stat(out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Mode().Perm(), info.Size())
	// Output: -rw------- 4096
}

// TestOutput: each destination gets the image's bytes; a file is 0600 under the most
// permissive umask and is not replaced without Force; an Output names one destination.
func TestOutput(t *testing.T) {
	umask.Permissive(t)
	dir := t.TempDir()
	base := bytes.Repeat([]byte("live"), 1024)
	isoPath := filepath.Join(dir, "live.iso")
	if err := os.WriteFile(isoPath, base, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plain, err := isobuilder.NewImage(f, int64(len(base)))
	if err != nil {
		t.Fatal(err)
	}
	img, err := plain.With(isobuilder.Patch{Offset: 100, Data: []byte("PATCH")})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(base)
	copy(want[100:], "PATCH")
	ctx := context.Background()

	var stream bytes.Buffer
	var reported int64
	if err := (isobuilder.Output{Stream: &stream, Progress: func(n int64) { reported = n }}).Write(ctx, img); err != nil ||
		!bytes.Equal(stream.Bytes(), want) || reported != int64(len(want)) {
		t.Errorf("stream: %v, %d bytes (progress %d)", err, stream.Len(), reported)
	}
	out := filepath.Join(dir, "out.iso")
	if err := (isobuilder.Output{File: out, Keep: []string{isoPath}}).Write(ctx, img); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Error("the file does not hold the image")
	}
	if info, _ := os.Stat(out); info.Mode().Perm() != isobuilder.SecretPerm {
		t.Errorf("file mode %04o, want %04o", info.Mode().Perm(), isobuilder.SecretPerm)
	}
	if err := (isobuilder.Output{File: out}).Write(ctx, img); !errors.Is(err, fs.ErrExist) {
		t.Errorf("an existing file without Force: %v", err)
	}
	if err := (isobuilder.Output{File: out, Force: true}).Write(ctx, img); err != nil {
		t.Errorf("with Force: %v", err)
	}
	if err := (isobuilder.Output{InPlace: isoPath}).Write(ctx, img); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(isoPath); !bytes.Equal(got, want) {
		t.Error("in place: the ISO does not hold the image")
	}
	for _, o := range []isobuilder.Output{{}, {File: out, Stream: &stream}, {InPlace: isoPath, File: out}} {
		if err := o.Write(ctx, img); !errors.Is(err, isobuilder.ErrNoOutput) {
			t.Errorf("%+v: %v, want ErrNoOutput", o, err)
		}
	}
}

// TestWriteWithRootfs: a minimal ISO and the rootfs it fetches are written together: both
// appear, the ISO 0600 and the stock rootfs not; when one cannot be written, neither does.
func TestWriteWithRootfs(t *testing.T) {
	umask.Permissive(t)
	iso, err := isobuilder.Open(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	dir := t.TempDir()
	ctx := context.Background()
	minimal := func() (*isobuilder.DerivedISO, *isobuilder.Image) {
		d, err := iso.MinimalFromMiniso(ctx, dir, isobuilder.MinimalOptions{RootfsURL: "http://192.0.2.1/rootfs.img"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		img, err := d.Image()
		if err != nil {
			t.Fatal(err)
		}
		return d, img
	}
	out, rootfs := filepath.Join(dir, "min.iso"), filepath.Join(dir, "rootfs.img")
	// The rootfs's name is taken: neither file appears.
	taken := filepath.Join(dir, "taken.img")
	if err := os.WriteFile(taken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, img := minimal()
	if err := (isobuilder.Output{File: out}).WriteWithRootfs(ctx, iso, d, img, taken); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a rootfs over an existing file: %v", err)
	}
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the ISO appeared without its rootfs: %v", err)
	}
	d, img = minimal()
	if err := (isobuilder.Output{File: out}).WriteWithRootfs(ctx, iso, d, img, rootfs); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{out: isobuilder.SecretPerm, rootfs: isobuilder.PublicPerm} {
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %04o", path, info, err, want)
		}
	}
}
