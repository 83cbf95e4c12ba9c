package node_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// liveISO is the 2023-07 x86_64 fixture with a live initramfs in place of its placeholder
// bytes, so that a PXE initramfs can be customized from it.
func liveISO(t *testing.T) string {
	t.Helper()
	raw := bytes.Clone(fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")) // the cache is shared
	main, err := initrd.Pack(initrd.Files{
		isobuilder.LiveInitramfsStamp: nil,
		"etc/coreos/features.json":    []byte(`{"installer-config": true, "live-initrd-network": true}`),
		"init":                        []byte("#!/bin/sh\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := fixtures.DirectoryRecord(t, raw, "INITRD.IMG;1")
	fixtures.SetFile(t, raw, "INITRD.IMG;1", int(binary.LittleEndian.Uint32(raw[rec+2:]))*isobuilder.SectorSize, main)
	path := filepath.Join(t.TempDir(), "rhcos-live.iso")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadNode is what a Go program does: open the live ISO, load a node from its files.
func loadNode(t *testing.T, isoPath string) (*isobuilder.LiveISO, *node.Node) {
	t.Helper()
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iso.Close() })
	bip, err := bipgen.Generate(bipgen.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ign := filepath.Join(t.TempDir(), "bootstrap-in-place-for-live-iso.ign")
	if err := os.WriteFile(ign, bip, 0o600); err != nil {
		t.Fatal(err)
	}
	n, _, err := node.Load(node.Inputs{IgnitionPath: ign, Overrides: coreos.InstallationFlags{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}})
	if err != nil {
		t.Fatal(err)
	}
	return iso, n
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// TestWriteDirModes: a program that writes a node's PXE directory through the library gets
// the secret file-mode rule without knowing it: under the most permissive umask, the files
// that carry the config or may name a capability URL are the owner's only, the kernel and
// rootfs are not.
func TestWriteDirModes(t *testing.T) {
	umask.Permissive(t)
	iso, n := loadNode(t, liveISO(t))
	set, err := n.PXE(iso, "http://192.0.2.1:8080/TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pxe")
	if err := set.WriteDir(context.Background(), dir, node.DirOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range set.Names() {
		want := fs.FileMode(0o600)
		if name == isobuilder.PXEKernel || name == isobuilder.PXERootfs {
			want = 0o666
		}
		if got := mode(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s: mode %04o, want %04o", name, got, want)
		}
	}
	// All or none: a second write refuses at once and leaves the first whole.
	before := mode(t, filepath.Join(dir, isobuilder.PXEInitramfs))
	if err := set.WriteDir(context.Background(), dir, node.DirOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("writing over the directory without Force: %v, want fs.ErrExist", err)
	}
	err = set.WriteDir(context.Background(), dir, node.DirOptions{Force: true})
	if err != nil || mode(t, filepath.Join(dir, isobuilder.PXEInitramfs)) != before {
		t.Errorf("with Force: %v", err)
	}
}

// TestMediaWriteSecret: the node's ISO written to a file through the library is the owner's
// only, a plain image over the input as well as a minimal ISO.
func TestMediaWriteSecret(t *testing.T) {
	umask.Permissive(t)
	iso, n := loadNode(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	dir := t.TempDir()
	for _, minimal := range []bool{false, true} {
		media, err := n.Media(context.Background(), iso, node.MediaOptions{Minimal: minimal, TempDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "sno.iso")
		if minimal {
			out = filepath.Join(dir, "sno-minimal.iso")
		}
		if err := media.Write(context.Background(), isobuilder.Output{File: out}); err != nil {
			t.Fatal(err)
		}
		if media.Derived != nil {
			media.Derived.Close()
		}
		if got := mode(t, out); got != 0o600 {
			t.Errorf("minimal %v: mode %04o, want 0600", minimal, got)
		}
		written, err := isobuilder.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := written.EmbeddedIgnition(); err != nil {
			t.Errorf("minimal %v: the written ISO carries no config: %v", minimal, err)
		}
		written.Close()
	}
}
