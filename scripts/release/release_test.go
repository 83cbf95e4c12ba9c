package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// moduleCopy copies the module's files as they are in the working tree (tracked and new,
// not ignored) to a new directory, to build it from another path than the original.
func moduleCopy(t *testing.T, moduleDir string) string {
	t.Helper()
	list, err := gitOutput(moduleDir, "ls-files", "--cached", "--others", "--exclude-standard")
	if err != nil {
		testenv.Missing(t, "the module is not a git checkout: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "elsewhere", "sno-iso")
	for _, name := range strings.Split(list, "\n") {
		data, err := os.ReadFile(filepath.Join(moduleDir, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(moduleDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReleaseIsReproducible builds the release for this machine's platform from this
// checkout and, with an empty build cache so that nothing is reused, from a copy at another
// path: every file must have the same bytes, the checksums must verify with sha256sum, and
// the binary must report the stamped version.
func TestReleaseIsReproducible(t *testing.T) {
	testenv.Long(t, "compiles the whole program twice, once without a build cache")
	moduleDir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	target := runtime.GOOS + "/" + runtime.GOARCH
	stamp := build{version: "v0.0.0-repro", commit: "0123456789abcdef"}
	dists := [2]string{filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "dist")}
	for i, dir := range [2]string{moduleDir, moduleCopy(t, moduleDir)} {
		if i == 1 {
			t.Setenv("GOCACHE", t.TempDir())
		}
		b := stamp
		b.moduleDir = dir
		if err := b.release(context.Background(), []string{target}, dists[i]); err != nil {
			t.Fatal(err)
		}
	}

	entries, err := os.ReadDir(dists[0])
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
		a, errA := os.ReadFile(filepath.Join(dists[0], e.Name()))
		b, errB := os.ReadFile(filepath.Join(dists[1], e.Name()))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", e.Name(), errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the two builds", e.Name())
		}
	}
	binary := stamp.binaryName(target)
	for _, want := range []string{binary, "SHA256SUMS", "sno-iso.1", "sno-iso.bash", "_sno-iso", "sno-iso.fish"} {
		if !names[want] {
			t.Errorf("the release has no %s: %v", want, names)
		}
	}

	check := exec.Command(testenv.Tool(t, "sha256sum", "coreutils"), "--check", "--strict", "SHA256SUMS")
	check.Dir = dists[0]
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dists[0], binary), "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", binary, err)
	}
	want := "sno-iso version v0.0.0-repro (commit 0123456789abcdef, " + runtime.Version() + ")\n"
	if string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
}
