package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/nodedir"
)

// Run with the most permissive umask, the commands still write every file that carries a
// config 0600: ISOs, a PXE set's initramfs and boot configurations (they name --base-url,
// which may be a capability URL), a wrapped config, extracted keyfiles. The kernel and rootfs
// copied from the ISO get the umask's mode.
func TestConfigOutputsArePrivate(t *testing.T) {
	umask.Permissive(t)
	iso, pxeISO := fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), withInitramfs(t, stockLiveInitramfs(t))
	work := t.TempDir()
	ign := bipConfig(t, work, 150000)
	src := keyfileDir(t)
	full, minimal, pxe, wrapped, net, keyfiles := filepath.Join(work, "sno.iso"), filepath.Join(work, "minimal.iso"),
		filepath.Join(work, "pxe"), filepath.Join(work, "config.img"), filepath.Join(work, "net.iso"), filepath.Join(work, "keyfiles")
	cfg := writeFile(t, filepath.Join(work, nodedir.ConfigFile), serveSnoYAML)
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", full)
	mustSno(t, nil, "build", "--minimal", "--rootfs-url", "http://192.0.2.1/rootfs.img", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", minimal)
	mustSno(t, nil, "pxe", "build", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", pxe)
	mustSno(t, nil, "pxe", "ignition", "wrap", "-i", ign, "-o", wrapped)
	mustSno(t, nil, "network", "embed", "-k", filepath.Join(src, "a.nmconnection"), "-o", net, iso)
	mustSno(t, nil, "network", "extract", "-C", keyfiles, net)
	want := map[string]fs.FileMode{full: 0o600, minimal: 0o600, wrapped: 0o600, net: 0o600, filepath.Join(keyfiles, "a.nmconnection"): 0o600}
	pxeFiles := 0
	if err := filepath.WalkDir(pxe, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			pxeFiles++
			want[p] = 0o600
			if name := d.Name(); name == isobuilder.PXEKernel || name == isobuilder.PXERootfs {
				want[p] = 0o666
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
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
	if pxeFiles < 4 {
		t.Errorf("pxe build wrote %d files", pxeFiles)
	}
}
