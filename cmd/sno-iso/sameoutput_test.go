package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/nodedir"
)

// `minimal --output-rootfs X ISO X` names one file for two outputs: a usage error, with or
// without -f, that leaves nothing behind.
func TestMinimalTwoOutputsOneFile(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	for _, force := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "o.iso")
		args := []string{"minimal", "--output-rootfs", out, iso, out}
		if force {
			args = append([]string{"minimal", "-f"}, args[1:]...)
		}
		r := sno(t, nil, args...)
		wantFailure(t, r, "--output-rootfs", "same file")
		if r.code != 2 {
			t.Errorf("-f %v: exit %d, want 2 (usage)", force, r.code)
		}
		// The same file by another spelling.
		r = sno(t, nil, "minimal", "--output-rootfs", filepath.Join(dir, ".", "o.iso"), iso, out)
		wantFailure(t, r, "same file")
		if left := dirEntries(t, dir); len(left) != 0 {
			t.Errorf("-f %v: left %q", force, left)
		}
	}
	// An existing file under two names (a hard link) is the same file too.
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.iso"), filepath.Join(dir, "b.img")
	if err := os.WriteFile(a, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, sno(t, nil, "minimal", "-f", "--output-rootfs", b, iso, a), "same file")
}

// aliasForm names the file at path, which may not exist yet, by another path.
type aliasForm struct {
	name  string
	alias func(t *testing.T, path string) string
}

var aliasForms = []aliasForm{
	{"dot", func(t *testing.T, path string) string {
		return filepath.Join(filepath.Dir(path), ".", filepath.Base(path))
	}},
	{"dotdot", func(t *testing.T, path string) string {
		dir := filepath.Dir(path)
		return dir + "/../" + filepath.Base(dir) + "/" + filepath.Base(path)
	}},
	{"relative link beside it", func(t *testing.T, path string) string {
		f, err := os.CreateTemp(filepath.Dir(path), "link-*")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		os.Remove(f.Name())
		symlink(t, filepath.Base(path), f.Name())
		return f.Name()
	}},
	{"absolute link elsewhere", func(t *testing.T, path string) string {
		link := filepath.Join(t.TempDir(), "link")
		symlink(t, path, link)
		return link
	}},
	{"linked directory", func(t *testing.T, path string) string {
		dir := filepath.Join(t.TempDir(), "linked")
		symlink(t, filepath.Dir(path), dir)
		return filepath.Join(dir, filepath.Base(path))
	}},
}

// linkUnchanged returns a check that path, if it is a symbolic link, still is the same one.
func linkUnchanged(t *testing.T, path string) func() {
	t.Helper()
	target, err := os.Readlink(path)
	if err != nil {
		return func() {}
	}
	return func() {
		t.Helper()
		if got, err := os.Readlink(path); err != nil || got != target {
			t.Errorf("%s was a link to %s, is now %q, %v", path, target, got, err)
		}
	}
}

// TestMinimalTwoOutputsOneFileByAlias: the minimal ISO and --output-rootfs naming one file
// that does not exist yet, through a link or a linked directory, are a usage error, -f or
// not; nothing is written and the link stays.
func TestMinimalTwoOutputsOneFileByAlias(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	for _, form := range aliasForms {
		for _, force := range [][]string{nil, {"-f"}} {
			dir := t.TempDir()
			out := filepath.Join(dir, "o.iso")
			rootfs := form.alias(t, out)
			unchanged := linkUnchanged(t, rootfs)
			args := append(append([]string{"minimal"}, force...), "--output-rootfs", rootfs, iso, out)
			r := sno(t, nil, args...)
			if r.code != 2 {
				t.Errorf("%s %v: exit %d, want 2 (usage): %s", form.name, force, r.code, r.stderr)
				continue
			}
			wantFailure(t, r, "same file")
			unchanged()
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s %v: %s was written", form.name, force, out)
			}
		}
	}
}

// TestOutputIsInputByAlias: build, ignition embed and pxe build refuse an output that is one
// of their inputs by another name, --force or not, and change neither the input nor the link.
func TestOutputIsInputByAlias(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	inputs := t.TempDir()
	ign := bipConfig(t, inputs, 150000)
	cfg := writeFile(t, filepath.Join(inputs, nodedir.ConfigFile), serveSnoYAML)
	sums := map[string]string{iso: fileSHA(t, iso), ign: fileSHA(t, ign), cfg: fileSHA(t, cfg)}
	check := func(t *testing.T, r result, unchanged func()) {
		t.Helper()
		if r.code == 0 || !strings.Contains(string(r.stderr), "Error: ") || !strings.Contains(string(r.stderr), "one of the inputs") {
			t.Errorf("exit %d: %s; want an error: the output is one of the inputs", r.code, r.stderr)
		}
		unchanged()
		for in, sum := range sums {
			if fileSHA(t, in) != sum {
				t.Fatalf("%s changed", in)
			}
		}
	}
	for _, form := range aliasForms {
		t.Run(form.name, func(t *testing.T) {
			for _, in := range []string{iso, ign, cfg} {
				out := form.alias(t, in)
				r := sno(t, nil, "build", "--force", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", out)
				check(t, r, linkUnchanged(t, out))
			}
			for _, in := range []string{iso, ign} {
				out := form.alias(t, in)
				check(t, sno(t, nil, "ignition", "embed", "-f", "-i", ign, "-o", out, iso), linkUnchanged(t, out))
			}
		})
	}
	// pxe build -o DIR: a file of DIR that is an input (by a link leading out of DIR, a hard
	// link), and DIR named through a linked directory.
	pxeISO := withInitramfs(t, stockLiveInitramfs(t))
	sums[pxeISO] = fileSHA(t, pxeISO)
	pxeBuild := func(dir string) result {
		return sno(t, nil, "pxe", "build", "--force", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", dir)
	}
	dir := t.TempDir()
	symlink(t, ign, filepath.Join(dir, "initrd.img"))
	check(t, pxeBuild(dir), linkUnchanged(t, filepath.Join(dir, "initrd.img")))

	dir = t.TempDir()
	if err := os.Link(cfg, filepath.Join(dir, "boot.ipxe")); err != nil {
		t.Fatal(err)
	}
	check(t, pxeBuild(dir), func() {})

	linked := filepath.Join(t.TempDir(), "linked")
	symlink(t, filepath.Dir(pxeISO), linked)
	if err := os.Rename(pxeISO, filepath.Join(filepath.Dir(pxeISO), "rootfs.img")); err != nil {
		t.Fatal(err)
	}
	delete(sums, pxeISO)
	pxeISO = filepath.Join(filepath.Dir(pxeISO), "rootfs.img")
	sums[pxeISO] = fileSHA(t, pxeISO)
	check(t, sno(t, nil, "pxe", "build", "--force", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", linked), func() {})
}
