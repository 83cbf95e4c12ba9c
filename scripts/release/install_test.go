package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// makeInstall runs make install into a staging directory, with the build and the docs kept
// out of the checkout, and returns the staging directory.
func makeInstall(t *testing.T, vars ...string) string {
	t.Helper()
	testenv.Tool(t, "make", "make")
	scratch := t.TempDir()
	destDir := filepath.Join(scratch, "staging")
	args := append([]string{"-C", "../..", "install", "DESTDIR=" + destDir, "PREFIX=/usr",
		"BIN=" + filepath.Join(scratch, "bin", "sno-iso"), "DOCS=" + filepath.Join(scratch, "docs"),
		"VERSION=v0.0.0-install", "COMMIT=0123abc"}, vars...)
	if out, err := exec.Command("make", args...).CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	return destDir
}

// TestMakeInstall: the binary, the man page and the completions land where PREFIX and
// DESTDIR put them, and coreos-installer only on request, as a link to sno-iso.
func TestMakeInstall(t *testing.T) {
	destDir := makeInstall(t)
	for path, mode := range map[string]os.FileMode{
		"usr/bin/sno-iso":                                  0o755,
		"usr/share/man/man1/sno-iso.1":                     0o644,
		"usr/share/man/man5/sno.yaml.5":                    0o644,
		"usr/share/bash-completion/completions/sno-iso":    0o644,
		"usr/share/zsh/site-functions/_sno-iso":            0o644,
		"usr/share/fish/vendor_completions.d/sno-iso.fish": 0o644,
	} {
		info, err := os.Stat(filepath.Join(destDir, path))
		if err != nil {
			t.Errorf("not installed: %v", err)
			continue
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), mode)
		}
	}
	if _, err := os.Lstat(filepath.Join(destDir, "usr/bin/coreos-installer")); err == nil {
		t.Error("coreos-installer installed without COREOS_INSTALLER_LINK")
	}

	destDir = makeInstall(t, "COREOS_INSTALLER_LINK=1")
	link := filepath.Join(destDir, "usr/bin/coreos-installer")
	if target, err := os.Readlink(link); err != nil || target != "sno-iso" {
		t.Fatalf("coreos-installer links to %q (%v), want sno-iso beside it", target, err)
	}
	for _, path := range []string{"usr/share/bash-completion/completions/coreos-installer", "usr/share/zsh/site-functions/_coreos-installer",
		"usr/share/fish/vendor_completions.d/coreos-installer.fish"} {
		if _, err := os.Stat(filepath.Join(destDir, path)); err != nil {
			t.Errorf("the link's completion is not installed: %v", err)
		}
	}
	out, err := exec.Command(link, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "coreos-installer v0.0.0-install (sno-iso, commit 0123abc,") {
		t.Errorf("coreos-installer --version: %q, %v", out, err)
	}
}
