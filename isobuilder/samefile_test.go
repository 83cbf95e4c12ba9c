package isobuilder

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSameFile: every way of naming one file twice is one file, whether it exists yet or
// not, and different files, or the same name in different directories, are not.
func TestSameFile(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	other := filepath.Join(root, "other")
	for _, d := range []string{real, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(real, filepath.Join(root, "linkdir")))
	must(os.Symlink("../real", filepath.Join(other, "up")))
	// Links to a file that does not exist yet: relative, absolute, through a linked
	// directory with "..", and a chain of two.
	must(os.Symlink("new.iso", filepath.Join(real, "rel")))
	must(os.Symlink(filepath.Join(real, "new.iso"), filepath.Join(other, "abs")))
	must(os.Symlink("../real/new.iso", filepath.Join(root, "linkdir", "viadir")))
	must(os.Symlink("abs", filepath.Join(other, "chain")))
	// An existing file and its hard link.
	must(os.WriteFile(filepath.Join(real, "old.iso"), []byte("old"), 0o644))
	must(os.Link(filepath.Join(real, "old.iso"), filepath.Join(other, "hard")))
	must(os.Symlink("../real/old.iso", filepath.Join(other, "soft")))
	t.Chdir(real)

	newISO := filepath.Join(real, "new.iso")
	oldISO := filepath.Join(real, "old.iso")
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{newISO, "new.iso", true},
		{newISO, "./new.iso", true},
		{newISO, "../real/./new.iso", true},
		{newISO, filepath.Join(root, "linkdir", "new.iso"), true},
		{newISO, filepath.Join(other, "up", "new.iso"), true},
		{newISO, filepath.Join(real, "rel"), true},
		{newISO, filepath.Join(other, "abs"), true},
		{newISO, filepath.Join(real, "viadir"), true},
		{newISO, filepath.Join(other, "chain"), true},
		{oldISO, filepath.Join(other, "hard"), true},
		{oldISO, filepath.Join(other, "soft"), true},
		{filepath.Join(other, "hard"), filepath.Join(root, "linkdir", "old.iso"), true},

		{newISO, filepath.Join(other, "new.iso"), false},
		{newISO, oldISO, false},
		{newISO, filepath.Join(real, "new.img"), false},
		{filepath.Join(real, "missing", "x"), filepath.Join(other, "missing", "x"), false},
		{newISO, "-", false},
		{"-", "-", false},
		{"", "", false},
	} {
		if got := SameFile(tc.a, tc.b); got != tc.same {
			t.Errorf("SameFile(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := SameFile(tc.b, tc.a); got != tc.same {
			t.Errorf("SameFile(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}

// TestStageOutputsOneFile: a second output that is the first by another name is refused,
// with force too, and nothing is written.
func TestStageOutputsOneFile(t *testing.T) {
	dir := t.TempDir()
	linkdir := filepath.Join(t.TempDir(), "linkdir")
	if err := os.Symlink(dir, linkdir); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(t.TempDir(), "dangling")
	if err := os.Symlink(filepath.Join(dir, "o.iso"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{filepath.Join(linkdir, "o.iso"), dangling, filepath.Join(dir, ".", "o.iso")} {
		s := NewStage(true)
		stageFile(t, s, filepath.Join(dir, "o.iso"), "minimal", 0o600)
		if _, err := s.Create(alias, PublicPerm); !errors.Is(err, ErrSameOutput) {
			t.Errorf("%s: %v, want ErrSameOutput", alias, err)
		}
		s.Abort()
		assertOnly(t, dir)
	}
}

// TestStageKeepsInputsThroughLinks: an output name that is a link to an input leading out of
// the output's directory is that input.
func TestStageKeepsInputsThroughLinks(t *testing.T) {
	in := filepath.Join(t.TempDir(), "config.ign")
	if err := os.WriteFile(in, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.iso")
	if err := os.Symlink(in, out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Stage{NewStage(true), mustStageIn(t, dir)} {
		s.Keep(in)
		if _, err := s.Create(out, SecretPerm); !errors.Is(err, ErrOutputIsInput) {
			t.Errorf("%v, want ErrOutputIsInput", err)
		}
		s.Abort()
	}
	if target, err := os.Readlink(out); err != nil || target != in {
		t.Errorf("the link is now %q, %v", target, err)
	}
}

func mustStageIn(t *testing.T, dir string) *Stage {
	t.Helper()
	s, err := NewStageIn(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
