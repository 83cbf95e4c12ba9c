package isobuilder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func stageFile(t *testing.T, s *Stage, dest, content string, perm fs.FileMode) {
	t.Helper()
	f, err := s.Create(dest, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

func TestStageCommitsAll(t *testing.T) {
	dir := t.TempDir()
	s := NewStage(false)
	if err := s.MkdirAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	stageFile(t, s, filepath.Join(dir, "a"), "A", 0o644)
	stageFile(t, s, filepath.Join(dir, "sub", "b"), "B", 0o600)
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an output is in place before Commit: %v", err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Abort() // after Commit: nothing to do
	for name, want := range map[string]string{"a": "A", "sub/b": "B"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if info, _ := os.Stat(filepath.Join(dir, "sub", "b")); info.Mode().Perm() != 0o600 {
		t.Errorf("secret output has mode %v, want 0600", info.Mode().Perm())
	}
	assertOnly(t, dir, "a", "sub")
	assertOnly(t, filepath.Join(dir, "sub"), "b")
}

func TestStageAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s := NewStage(false)
	if err := s.MkdirAll(filepath.Join(dir, "new", "deeper")); err != nil {
		t.Fatal(err)
	}
	stageFile(t, s, filepath.Join(dir, "new", "deeper", "x"), "X", 0o644)
	s.Abort()
	assertOnly(t, dir)
}

func TestStageRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	os.WriteFile(keep, []byte("old"), 0o644)
	s := NewStage(false)
	if _, err := s.Create(keep, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an existing file: %v", err)
	}

	// A file that appears between Create and Commit is not replaced, and what was moved in
	// before it is taken back out.
	first, late := filepath.Join(dir, "first"), filepath.Join(dir, "late")
	stageFile(t, s, first, "1", 0o644)
	stageFile(t, s, late, "2", 0o644)
	os.WriteFile(late, []byte("theirs"), 0o644)
	if err := s.Commit(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Commit onto a file that appeared: %v", err)
	}
	if got, _ := os.ReadFile(late); string(got) != "theirs" {
		t.Errorf("the file that appeared was replaced: %q", got)
	}
	assertOnly(t, dir, "keep", "late")

	// With force both are replaced.
	s = NewStage(true)
	stageFile(t, s, keep, "new", 0o644)
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(keep); string(got) != "new" {
		t.Errorf("with force: %q", got)
	}
}

// A Stage never replaces a kept input, by its own name or another link to it, even with
// force; other files are replaced as before.
func TestStageKeepsInputs(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "config.ign")
	if err := os.WriteFile(input, []byte("the input"), 0o600); err != nil {
		t.Fatal(err)
	}
	hardLink := filepath.Join(dir, "link.ign")
	if err := os.Link(input, hardLink); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("replace me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{input, hardLink, filepath.Join(dir, ".", "config.ign")} {
		s := NewStage(true)
		s.Keep(input, "-", "", filepath.Join(dir, "missing"))
		_, err := s.Create(dest, SecretPerm)
		s.Abort()
		if !errors.Is(err, ErrOutputIsInput) || !strings.Contains(err.Error(), dest) {
			t.Errorf("Create(%s) over a kept input: %v, want ErrOutputIsInput naming it", dest, err)
		}
		if err := CheckOutput(dest, input); !errors.Is(err, ErrOutputIsInput) {
			t.Errorf("CheckOutput(%s): %v, want ErrOutputIsInput", dest, err)
		}
	}
	s := NewStage(true)
	s.Keep(input)
	f, err := s.Create(other, SecretPerm)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("replaced")
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(input); string(data) != "the input" {
		t.Errorf("the input now holds %q", data)
	}
	if data, _ := os.ReadFile(other); string(data) != "replaced" {
		t.Errorf("the other file holds %q, want it replaced", data)
	}
}
