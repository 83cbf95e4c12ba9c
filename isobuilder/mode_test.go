package isobuilder

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
)

// Under the most permissive umask, an image written as a secret is 0600, replacing an
// existing file included; the stock rootfs and PXE files keep the umask's mode.
func TestOutputModesUnderPermissiveUmask(t *testing.T) {
	umask.Permissive(t)
	l, err := Open(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	patch, err := l.PayloadPatch(initrd.Files{initrd.IgnitionPath: []byte(`{"ignition":{"version":"3.2.0"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	img, err := l.Image(patch)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	iso, replaced := filepath.Join(dir, "sno.iso"), filepath.Join(dir, "old.iso")
	if err := os.WriteFile(replaced, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range []func() error{
		func() error { return WriteFile(ctx, img, iso, WriteOptions{Perm: SecretPerm}) },
		func() error { return WriteFile(ctx, img, replaced, WriteOptions{Force: true, Perm: SecretPerm}) },
	} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	stage := NewStage(false)
	defer stage.Abort()
	if err := l.WriteRootfs(ctx, stage, filepath.Join(dir, "rootfs.img")); err != nil {
		t.Fatal(err)
	}
	if err := stage.Commit(); err != nil {
		t.Fatal(err)
	}
	extracted, err := l.ExtractPXE(ctx, dir, "pxe-")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{iso: 0o600, replaced: 0o600, filepath.Join(dir, "rootfs.img"): 0o666}
	for _, p := range extracted {
		want[p] = 0o666
	}
	for p, mode := range want {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", p, info.Mode().Perm(), mode)
		}
	}
}
