package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/nodedir"
)

// outsideDir returns a directory outside the output directory holding one file, and a check
// that it still holds exactly that.
func outsideDir(t *testing.T) (dir, file string, unchanged func()) {
	t.Helper()
	dir = t.TempDir()
	file = writeFile(t, filepath.Join(dir, "precious"), "precious\n")
	return dir, file, func() {
		t.Helper()
		if got := dirEntries(t, dir); !slices.Equal(got, []string{"precious"}) {
			t.Errorf("the directory outside holds %v now", got)
		}
		if b, _ := os.ReadFile(file); string(b) != "precious\n" {
			t.Errorf("the file outside holds %q now", b)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestPXESymlinksInOutputDir plants symbolic links leading out of the output directory of
// pxe build and pxe extract: a subdirectory that is a link, links at output names. Nothing
// outside may change, and a refusal names the link.
func TestPXESymlinksInOutputDir(t *testing.T) {
	iso, pxeISO := fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), withInitramfs(t, stockLiveInitramfs(t))
	inputs := t.TempDir()
	ign := bipConfig(t, inputs, 150000)
	cfg := writeFile(t, filepath.Join(inputs, nodedir.ConfigFile), serveSnoYAML)
	build := func(out string, extra ...string) result {
		return sno(t, nil, append([]string{"pxe", "build", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", out}, extra...)...)
	}

	t.Run("build, linked subdirectory", func(t *testing.T) {
		outside, _, unchanged := outsideDir(t)
		out := t.TempDir()
		link := filepath.Join(out, "pxelinux.cfg")
		symlink(t, outside, link)
		for _, force := range [][]string{nil, {"--force"}} {
			wantFailure(t, build(out, force...), link, "symbolic link", "remove the link")
			unchanged()
			if got := dirEntries(t, out); !slices.Equal(got, []string{"pxelinux.cfg"}) {
				t.Errorf("a refused pxe build left %v", got)
			}
		}
	})

	t.Run("build, links at output names", func(t *testing.T) {
		outside, file, unchanged := outsideDir(t)
		out := t.TempDir()
		symlink(t, file, filepath.Join(out, "boot.ipxe"))
		symlink(t, outside, filepath.Join(out, "grub.cfg"))
		wantFailure(t, build(out), "boot.ipxe", "exists", "--force")
		unchanged()
		// --force replaces the links themselves.
		if r := build(out, "--force"); r.code != 0 {
			t.Fatalf("pxe build --force: exit %d: %s", r.code, r.stderr)
		}
		unchanged()
		for _, name := range []string{"boot.ipxe", "grub.cfg"} {
			info, err := os.Lstat(filepath.Join(out, name))
			if err != nil || !info.Mode().IsRegular() {
				t.Errorf("%s after pxe build --force: %v, %v; want the output file in place of the link", name, info, err)
			}
		}
	})

	t.Run("extract", func(t *testing.T) {
		outside, file, unchanged := outsideDir(t)
		stem := strings.TrimSuffix(filepath.Base(iso), ".iso")
		for _, target := range []string{file, outside} {
			out := t.TempDir()
			symlink(t, target, filepath.Join(out, stem+"-vmlinuz"))
			wantFailure(t, sno(t, nil, "pxe", "extract", "-o", out, iso), stem+"-vmlinuz", "exists")
			unchanged()
			if got := dirEntries(t, out); !slices.Equal(got, []string{stem + "-vmlinuz"}) {
				t.Errorf("a refused pxe extract left %v", got)
			}
		}
	})
}
