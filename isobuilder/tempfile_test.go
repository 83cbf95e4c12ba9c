package isobuilder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
)

// useNamedTemps makes the test take the fallback used where O_TMPFILE is unavailable.
func useNamedTemps(t *testing.T) {
	t.Cleanup(func() { unnamedTemps = true })
	unnamedTemps = false
}

// testOutDir opens dir for the rest of the test.
func testOutDir(t *testing.T, dir string) *outDir {
	t.Helper()
	d, err := openOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}

// entriesWithPrefix lists the names in dir that start with prefix.
func entriesWithPrefix(t *testing.T, dir, prefix string) []string {
	t.Helper()
	return slices.DeleteFunc(dirNames(t, dir), func(name string) bool { return !strings.HasPrefix(name, prefix) })
}

// TestTempFileNames checks what a writer leaves in the directory while an output is being
// written: nothing on Linux (an unnamed file), one locked ".sno-iso-tmp-" file in the
// fallback; and only the output after Commit, replacing an old one with force.
func TestTempFileNames(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "unnamed", true: "named"}[named], func(t *testing.T) {
			if named {
				useNamedTemps(t)
			}
			dir := t.TempDir()
			dest := filepath.Join(dir, "out")
			for round, force := range []bool{false, true} {
				s := NewStage(force)
				stageFile(t, s, dest, "secret "+string(rune('A'+round)), SecretPerm)
				temps := entriesWithPrefix(t, dir, ".")
				switch {
				case named && (len(temps) != 1 || !tempName.MatchString(temps[0]) || !strings.HasPrefix(temps[0], tempPrefix)):
					t.Errorf("round %d: while writing, the directory holds %v, want one %s file", round, temps, tempPrefix)
				case !named && runtime.GOOS == "linux" && len(temps) != 0:
					t.Errorf("round %d: while writing, the directory holds %v, want nothing (an unnamed file)", round, temps)
				}
				if err := s.Commit(); err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(dest); err != nil || string(got) != "secret "+string(rune('A'+round)) {
					t.Errorf("round %d: %s holds %q, %v", round, dest, got, err)
				}
				if info, err := os.Stat(dest); err != nil || info.Mode().Perm() != SecretPerm {
					t.Errorf("round %d: the secret output has mode %v, %v; want 0600", round, info.Mode().Perm(), err)
				}
				assertOnly(t, dir, "out")
			}
			s := NewStage(true)
			stageFile(t, s, filepath.Join(dir, "other"), "x", PublicPerm)
			s.Abort()
			assertOnly(t, dir, "out")
		})
	}
}

// TestSweepRemovesLeftovers leaves temporaries in a directory as killed runs would (named
// ones whose lock the kernel has released), beside live ones of a run still going and
// files that are not temporaries, and checks that the next output written there removes
// exactly the leftovers.
func TestSweepRemovesLeftovers(t *testing.T) {
	if !filelock.Supported {
		t.Skip("no advisory locks to tell a live temporary here; leftovers are removed after a day")
	}
	useNamedTemps(t)
	dir, outside := t.TempDir(), t.TempDir()
	d := testOutDir(t, dir)

	deadFile, err := createTemp(d, SecretPerm)
	if err != nil {
		t.Fatal(err)
	}
	deadFile.f.Close() // as a kill would: the name stays, the lock goes
	deadDir, err := createTempDir(d)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deadDir.workPath(), "data"), []byte("x"), 0o600)
	deadDir.lock.f.Close()
	liveFile, err := createTemp(d, SecretPerm)
	if err != nil {
		t.Fatal(err)
	}
	defer liveFile.discard()
	liveDir, err := createTempDir(d)
	if err != nil {
		t.Fatal(err)
	}
	defer liveDir.remove()

	oldNew, freshNew := newTempPrefix+"0123456789abcdef", newTempPrefix+"fedcba9876543210"
	notOurs := []string{".sno-iso-secret", tempPrefix + "notours", "keep.iso"}
	for _, name := range append([]string{oldNew, freshNew}, notOurs...) {
		writeTestFile(t, filepath.Join(dir, name), "x")
	}
	longAgo := time.Now().Add(-2 * newTempGrace)
	if err := os.Chtimes(filepath.Join(dir, oldNew), longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "target")
	writeTestFile(t, target, "outside")
	link := tempPrefix + "aaaaaaaaaaaaaaaa"
	if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
		t.Fatal(err)
	}

	// The next run: its first temporary in dir sweeps it.
	abs, _ := filepath.Abs(dir)
	swept.Delete(abs)
	s := NewStage(false)
	stageFile(t, s, filepath.Join(dir, "out"), "new", PublicPerm)
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}

	want := append([]string{"out", freshNew, link, liveFile.name, liveDir.name}, notOurs...)
	slices.Sort(want)
	assertOnly(t, dir, want...)
	if got, _ := os.ReadFile(target); string(got) != "outside" {
		t.Errorf("the sweep changed the file a link points to: %q", got)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStageInRefusesSymlinks plants symbolic links in a confined stage's directory: a
// subdirectory that leads out, a link at an output's name, and an output path outside the
// directory. Nothing may be written outside, and the errors name the link.
func TestStageInRefusesSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "target")
	writeTestFile(t, target, "outside")
	sub := filepath.Join(dir, "sub")
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	atName := filepath.Join(dir, "out")
	if err := os.Symlink(target, atName); err != nil {
		t.Fatal(err)
	}

	for _, force := range []bool{false, true} {
		s, err := NewStageIn(dir, force)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MkdirAll(filepath.Join(sub, "deeper")); !errors.Is(err, ErrOutsideOutputDir) || !strings.Contains(err.Error(), sub) {
			t.Errorf("MkdirAll through a linked subdirectory: %v, want ErrOutsideOutputDir naming %s", err, sub)
		}
		if _, err := s.Create(filepath.Join(sub, "f"), SecretPerm); !errors.Is(err, ErrOutsideOutputDir) || !strings.Contains(err.Error(), sub) {
			t.Errorf("Create in a linked subdirectory: %v, want ErrOutsideOutputDir naming %s", err, sub)
		}
		if _, err := s.Create(filepath.Join(outside, "f"), SecretPerm); !errors.Is(err, ErrOutsideOutputDir) {
			t.Errorf("Create outside the directory: %v, want ErrOutsideOutputDir", err)
		}
		if _, err := s.Create(filepath.Join(dir, "..", filepath.Base(outside), "f"), SecretPerm); !errors.Is(err, ErrOutsideOutputDir) {
			t.Errorf("Create through ..: %v, want ErrOutsideOutputDir", err)
		}
		_, err = s.Create(atName, SecretPerm)
		switch {
		case !force && !errors.Is(err, fs.ErrExist):
			t.Errorf("Create at a link without force: %v, want fs.ErrExist", err)
		case force && err != nil:
			t.Errorf("Create at a link with force: %v", err)
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// With force the link itself was replaced by the output.
	if info, err := os.Lstat(atName); err != nil || !info.Mode().IsRegular() {
		t.Errorf("%s after the forced output: %v, %v; want a regular file", atName, info, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "outside" {
		t.Errorf("the link's target was written: %q", got)
	}
	assertOnly(t, outside, "target")
	assertOnly(t, dir, "out", "sub")
}
