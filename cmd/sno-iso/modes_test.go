package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// Run with the most permissive umask, the commands still write every file that carries a
// config 0600: ISOs, a PXE set's files, a wrapped config, extracted keyfiles.
func TestConfigOutputsArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	iso, pxeISO := fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), withInitramfs(t, stockLiveInitramfs(t))
	work := t.TempDir()
	ign := bipConfig(t, work, 150000)
	src := keyfileDir(t)
	full, minimal, pxe, wrapped, net, keyfiles := filepath.Join(work, "sno.iso"), filepath.Join(work, "minimal.iso"),
		filepath.Join(work, "pxe"), filepath.Join(work, "config.img"), filepath.Join(work, "net.iso"), filepath.Join(work, "keyfiles")
	cfg := writeFile(t, filepath.Join(work, nodeConfig), serveSnoYAML)
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", full)
	mustSno(t, nil, "build", "--minimal", "--rootfs-url", "http://192.0.2.1/rootfs.img", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", minimal)
	mustSno(t, nil, "pxe", "build", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", pxe)
	mustSno(t, nil, "pxe", "ignition", "wrap", "-i", ign, "-o", wrapped)
	mustSno(t, nil, "network", "embed", "-k", filepath.Join(src, "a.nmconnection"), "-o", net, iso)
	mustSno(t, nil, "network", "extract", "-C", keyfiles, net)
	private := []string{full, minimal, wrapped, net, filepath.Join(keyfiles, "a.nmconnection")}
	if err := filepath.WalkDir(pxe, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			private = append(private, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range private {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, info.Mode().Perm())
		}
	}
	if len(private) < 9 {
		t.Errorf("pxe build wrote %d files", len(private)-5)
	}
}
