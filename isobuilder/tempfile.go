package isobuilder

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
)

// Temporary files and directories beside outputs.
//
// An output is written to a temporary file in its destination's directory and gets its name
// only when complete. On Linux that file has no name at all until then (O_TMPFILE), so a
// crash or SIGKILL leaves nothing behind. Elsewhere, where the filesystem refuses O_TMPFILE,
// and for directories, the temporary has a name of sno-iso's own: ".sno-iso-new-<hex>" for the
// moment it is created, then ".sno-iso-tmp-<hex>" once its maker holds an advisory lock on it
// (a file's own lock, a directory's "lock" file). The kernel drops that lock when its maker
// exits, however it ends, so the first temporary file made in a directory removes the
// ".sno-iso-tmp-" entries whose lock is free: their maker is gone. A ".sno-iso-new-" entry
// is someone's temporary in its first microseconds, or left by a kill in them; it is
// removed once older than newTempGrace. Where advisory locks tell nothing (not Unix), a
// ".sno-iso-tmp-" entry is removed only once older than unlockedTempAge.

const (
	newTempPrefix = ".sno-iso-new-"
	tempPrefix    = ".sno-iso-tmp-"
	// tempLockName is the lock file inside a temporary directory.
	tempLockName = "lock"
	// newTempGrace outlives by far the moment between creating a temporary and locking it.
	newTempGrace = time.Minute
	// unlockedTempAge is how old an unlockable temporary must be to be taken for a leftover:
	// longer than any run of sno-iso.
	unlockedTempAge = 24 * time.Hour
)

// tempName matches the names of sno-iso's temporaries (and nothing else of sno-iso's, such
// as serve's ".sno-iso-secret").
var tempName = regexp.MustCompile(`^\.sno-iso-(new|tmp)-[0-9a-f]{16}$`)

// errNoUnnamed means the filesystem or system cannot make unnamed files; a named temporary
// is used.
var errNoUnnamed = errors.New("no unnamed temporary files here")

// unnamedTemps is false in tests that exercise the named fallback used where O_TMPFILE is
// unavailable.
var unnamedTemps = true

// outDir is a directory that outputs and their temporaries go in, opened once: names are
// created, linked and renamed relative to it, so they stay in this directory even if a
// component of its path is replaced meanwhile.
type outDir struct {
	root *os.Root
	path string // as given, for messages and for go-diskfs, which takes paths
}

func openOutDir(path string) (*outDir, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &outDir{root: root, path: path}, nil
}

func (d *outDir) join(name string) string { return filepath.Join(d.path, name) }

func (d *outDir) close() { d.root.Close() }

// tempFile is an output being written in dir: unnamed, or named name there.
type tempFile struct {
	f    *os.File
	dir  *outDir
	name string // "" when the file has no name
}

// createTemp creates a temporary file in dir with mode perm before the umask. A secret is
// chmod'ed to SecretPerm as well, so that a default ACL cannot widen it.
func createTemp(dir *outDir, perm fs.FileMode) (*tempFile, error) {
	sweepOnce(dir)
	t, err := createTempFile(dir, perm)
	if err != nil {
		return nil, err
	}
	if perm == SecretPerm {
		if err := t.f.Chmod(SecretPerm); err != nil {
			t.discard()
			return nil, err
		}
	}
	return t, nil
}

func createTempFile(dir *outDir, perm fs.FileMode) (*tempFile, error) {
	if unnamedTemps {
		f, err := openUnnamed(dir, perm)
		if err == nil {
			filelock.TryLock(f, filelock.Exclusive) // so that the name it may get before its own (see publish) reads as in use
			return &tempFile{f: f, dir: dir}, nil
		}
		if !errors.Is(err, errNoUnnamed) {
			return nil, err
		}
	}
	return createNamed(dir, func(name string) (*os.File, error) {
		return dir.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	})
}

// createNamed makes a temporary with create under a new name, locks it and gives it its
// locked name.
func createNamed(dir *outDir, create func(name string) (*os.File, error)) (*tempFile, error) {
	for range 100 {
		suffix := fmt.Sprintf("%016x", rand.Uint64())
		f, err := create(newTempPrefix + suffix)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		t := &tempFile{f: f, dir: dir, name: newTempPrefix + suffix}
		// Where locks fail (some network filesystems) no other run can take the lock
		// either, so the temporary is never taken for a leftover.
		filelock.TryLock(f, filelock.Exclusive)
		if err := dir.root.Rename(t.name, tempPrefix+suffix); err != nil {
			t.discard()
			return nil, err
		}
		t.name = tempPrefix + suffix
		return t, nil
	}
	return nil, fmt.Errorf("no unused temporary file name in %s", dir.path)
}

// label names the temporary file in messages.
func (t *tempFile) label() string {
	if t.name == "" {
		return t.dir.join("(unnamed temporary file)")
	}
	return t.dir.join(t.name)
}

// publish gives the finished file the name dest in its directory, replacing an existing
// dest only when replace (a link or no-clobber rename otherwise, so that a file that
// appeared meanwhile is never overwritten). A symbolic link at dest is replaced, never
// followed. The file stays open, and locked, until discard.
func (t *tempFile) publish(dest string, replace bool) error {
	var err error
	switch {
	case t.name != "" && replace:
		err = t.dir.root.Rename(t.name, dest)
	case t.name != "":
		err = renameNoReplace(t.dir, t.name, dest)
	case !replace:
		err = linkUnnamed(t.dir, t.f, dest)
	default:
		// Rename is the only atomic replacement: name the file first, under a name a sweep
		// leaves alone while this file's lock is held.
		named := fmt.Sprintf("%s%016x", tempPrefix, rand.Uint64())
		if err = linkUnnamed(t.dir, t.f, named); err == nil {
			t.name = named
			err = t.dir.root.Rename(named, dest)
		}
	}
	if err != nil {
		return err
	}
	t.name = ""
	return nil
}

// discard closes the file and removes its name, if it still has one.
func (t *tempFile) discard() {
	t.f.Close()
	t.unname()
}

// unname removes the file's name, if it has one; the open file stays readable.
func (t *tempFile) unname() {
	if t.name != "" {
		t.dir.root.Remove(t.name)
		t.name = ""
	}
}

// tempDir is a temporary directory in dir: its work subdirectory is free for any use; a
// lock file beside it says its maker is alive.
type tempDir struct {
	dir  *outDir
	lock *tempFile
	name string
}

// createTempDir creates a temporary directory in dir.
func createTempDir(dir *outDir) (*tempDir, error) {
	sweepOnce(dir)
	var name string
	lock, err := createNamed(dir, func(newName string) (*os.File, error) {
		if err := dir.root.Mkdir(newName, 0o700); err != nil {
			return nil, err
		}
		f, err := dir.root.OpenFile(filepath.Join(newName, tempLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			dir.root.Remove(newName)
			return nil, err
		}
		name = newName
		return f, nil
	})
	if err != nil {
		if name != "" {
			dir.root.RemoveAll(name)
		}
		return nil, err
	}
	td := &tempDir{dir: dir, lock: lock, name: lock.name}
	lock.name = "" // the directory is removed as a whole
	if err := dir.root.Mkdir(filepath.Join(td.name, "work"), 0o700); err != nil {
		td.remove()
		return nil, err
	}
	return td, nil
}

// workPath is the path of the directory to use.
func (td *tempDir) workPath() string { return filepath.Join(td.dir.path, td.name, "work") }

func (td *tempDir) remove() {
	td.lock.discard()
	td.dir.root.RemoveAll(td.name)
}

// swept holds the directories swept by this process, by path: once each is enough.
var swept sync.Map

// sweepOnce removes the leftover temporaries in dir, the first time this process makes a
// temporary there.
func sweepOnce(dir *outDir) {
	if abs, err := filepath.Abs(dir.path); err == nil {
		if _, done := swept.LoadOrStore(abs, true); done {
			return
		}
	}
	sweep(dir, time.Now())
}

// sweep removes the temporaries in dir whose maker is gone. Errors leave an entry alone.
func sweep(dir *outDir, now time.Time) {
	d, err := dir.root.Open(".")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if tempName.MatchString(name) && isLeftover(dir.root, name, now) {
			dir.root.RemoveAll(name)
		}
	}
}

// isLeftover reports whether the temporary called name in root was left by a maker that is
// gone. It never touches what is not a regular file or a directory.
func isLeftover(root *os.Root, name string, now time.Time) bool {
	info, err := root.Lstat(name)
	if err != nil || !info.IsDir() && !info.Mode().IsRegular() {
		return false
	}
	age := now.Sub(info.ModTime())
	switch {
	case strings.HasPrefix(name, newTempPrefix):
		return age > newTempGrace
	case !filelock.Supported:
		return age > unlockedTempAge
	}
	lockName := name
	if info.IsDir() {
		lockName = filepath.Join(name, tempLockName)
	}
	f, err := root.OpenFile(lockName, os.O_RDWR, 0)
	if info.IsDir() && errors.Is(err, fs.ErrNotExist) {
		// No lock yet (just made), or none any more (a removal cut short by a kill).
		return age > newTempGrace
	}
	if err != nil {
		return false
	}
	defer f.Close()
	free, err := filelock.TryLock(f, filelock.Exclusive)
	return err == nil && free
}
