package isobuilder

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Stage writes a set of outputs atomically: each output is a temporary file beside its
// destination until Commit moves them all into place; Abort, or any error, leaves the
// destinations as they were and no temporary file behind. Every sink that writes files goes
// through a Stage.
type Stage struct {
	force    bool
	files    []*stagedFile
	madeDirs []string // created for the outputs, removed by Abort while still empty
}

// stagedFile is one output: the temporary file and where it goes.
type stagedFile struct {
	dest, tmp string
	f         *os.File // nil when the file was finished by its maker (adopt)
	existed   bool     // dest existed when the output was started
}

// NewStage starts a set of outputs. Without force an existing destination is refused, when
// it is created and again when it is committed.
func NewStage(force bool) *Stage { return &Stage{force: force} }

// Create starts the output dest and returns the file to write it to; perm is the mode asked
// for the new file (before the umask): SecretPerm or PublicPerm. An existing dest is refused unless force (the error
// wraps fs.ErrExist), and so is one that a rename would not replace sensibly.
func (s *Stage) Create(dest string, perm fs.FileMode) (*os.File, error) {
	existed, err := checkReplaceable(dest, s.force)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(filepath.Dir(dest), perm)
	if err != nil {
		return nil, fmt.Errorf("writing %s: creating temporary file: %w", dest, err)
	}
	s.files = append(s.files, &stagedFile{dest: dest, tmp: f.Name(), f: f, existed: existed})
	return f, nil
}

// adopt makes the finished and synced temporary file tmp, beside dest, one of the outputs.
func (s *Stage) adopt(tmp, dest string) error {
	existed, err := checkReplaceable(dest, s.force)
	if err != nil {
		return err
	}
	s.files = append(s.files, &stagedFile{dest: dest, tmp: tmp, existed: existed})
	return nil
}

// Commit syncs every output and moves it into place, in the order they were created. On
// error the outputs moved so far that did not exist before are removed again, and the rest
// discarded.
func (s *Stage) Commit() (err error) {
	var moved []*stagedFile
	defer func() {
		if err != nil {
			for _, sf := range moved {
				if !sf.existed {
					os.Remove(sf.dest)
				}
			}
			s.Abort()
		}
	}()
	for _, sf := range s.files {
		if sf.f == nil {
			continue
		}
		if err := sf.f.Sync(); err != nil {
			return fmt.Errorf("writing %s: syncing %s: %w", sf.dest, sf.tmp, err)
		}
		err := sf.f.Close()
		sf.f = nil
		if err != nil {
			return fmt.Errorf("writing %s: closing %s: %w", sf.dest, sf.tmp, err)
		}
	}
	dirs := map[string]bool{}
	for _, sf := range s.files {
		if err := publish(sf.tmp, sf.dest, s.force); err != nil {
			return err
		}
		moved = append(moved, sf)
		dirs[filepath.Dir(sf.dest)] = true
	}
	for dir := range dirs {
		syncDir(dir)
	}
	s.files, s.madeDirs = nil, nil // they hold the result now
	return nil
}

// Abort removes every temporary file and the directories made for the outputs. It is safe
// after Commit, which leaves it nothing to do.
func (s *Stage) Abort() {
	for _, sf := range s.files {
		if sf.f != nil {
			sf.f.Close()
		}
		os.Remove(sf.tmp)
	}
	s.files = nil
	for _, d := range slices.Backward(s.madeDirs) {
		os.Remove(d) // only if empty
	}
	s.madeDirs = nil
}

// MkdirAll creates dir and its missing parents for outputs; Abort removes those it made
// while they are empty.
func (s *Stage) MkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, d := range slices.Backward(missing) {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		s.madeDirs = append(s.madeDirs, d)
	}
	return nil
}

// checkReplaceable refuses, before any byte is written, an existing dest without force and
// a dest that a rename would not replace sensibly; it reports whether dest exists.
func checkReplaceable(dest string, force bool) (existed bool, err error) {
	info, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("writing %s: %w", dest, err)
	case !force:
		return true, existsError(dest)
	case info.IsDir():
		return true, fmt.Errorf("writing %s: it is a directory; name the output file", dest)
	case !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0:
		return true, fmt.Errorf("writing %s: it is not a regular file (%v); write to a device as a stream instead", dest, info.Mode().Type())
	}
	return true, nil
}

// publish moves the finished temporary file tmp to dest, replacing dest only with force (a
// no-clobber rename otherwise, so a file that appeared meanwhile is never overwritten).
func publish(tmp, dest string, force bool) error {
	var err error
	if force {
		err = os.Rename(tmp, dest)
	} else {
		err = renameNoReplace(tmp, dest)
	}
	if errors.Is(err, fs.ErrExist) {
		return existsError(dest)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}

func existsError(dest string) error {
	return fmt.Errorf("writing %s: %w", dest, ErrFileExists)
}

// ErrFileExists is wrapped by the error for an output that exists and may not be replaced;
// errors.Is(err, fs.ErrExist) holds for it. Its text is coreos-installer's, which scripts
// grep for.
var ErrFileExists error = fileExistsError{}

type fileExistsError struct{}

func (fileExistsError) Error() string        { return "File exists" }
func (fileExistsError) Is(target error) bool { return target == fs.ErrExist }

// The modes of new outputs, decided here for every writer of files. An output that carries a
// config holds the cluster's private keys: SecretPerm, the owner's only whatever the umask or
// a default ACL. A stock file (the kernel, the rootfs, a downloaded ISO) gets PublicPerm less
// the umask, like any new file.
const (
	SecretPerm fs.FileMode = 0o600
	PublicPerm fs.FileMode = 0o666
)

// createTemp creates a new hidden file in dir with mode perm before the umask. A secret is
// chmod'ed to SecretPerm as well, so that a default ACL cannot widen it.
func createTemp(dir string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, ".sno-iso-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil && perm == SecretPerm {
			if err = f.Chmod(SecretPerm); err != nil {
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return f, err
	}
	return nil, fmt.Errorf("no unused temporary file name in %s", dir)
}

// linkThenUnlink moves oldpath to newpath without replacing an existing newpath: creating a
// link fails if newpath exists.
func linkThenUnlink(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		return err
	}
	return os.Remove(oldpath)
}

// syncDir makes a rename in dir durable. Errors are ignored: the data itself is already synced
// and some filesystems cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
