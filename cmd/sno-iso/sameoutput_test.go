package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
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
