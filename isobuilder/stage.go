package isobuilder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Stage writes a set of outputs atomically: each output is a temporary file beside its
// destination (unnamed on Linux, see tempfile.go) until Commit moves them all into place;
// Abort, or any error, leaves the destinations as they were and no temporary file behind.
// Two outputs that are one file (SameFile) are refused with an error wrapping ErrSameOutput.
// Every sink that writes files goes through a Stage.
type Stage struct {
	force    bool
	kept     []keptFile         // inputs that no output may replace
	within   *outDir            // set by NewStageIn: every output is inside it
	dirs     map[string]*outDir // the outputs' directories, by path
	files    []*stagedFile
	madeDirs []string // created for the outputs, removed by Abort while still empty
}

// stagedFile is one output: the temporary file and where it goes.
type stagedFile struct {
	dest    string
	tmp     *tempFile
	adopted bool // finished, synced and closed by its maker (a DerivedISO)
	existed bool // dest existed when the output was started
}

// keptFile is an input of the work that its outputs must not replace.
type keptFile struct {
	path string
	info fs.FileInfo
}

// ErrOutputIsInput is wrapped by the error for an output that is one of the work's inputs
// (Stage.Keep): replacing it, even with force, would lose the input.
var ErrOutputIsInput = errors.New("the output is one of the inputs")

// ErrOutsideOutputDir means that an output of a Stage made by NewStageIn would be written
// through a symbolic link in its directory, or outside it.
var ErrOutsideOutputDir = errors.New("outputs are written inside their directory and never through a symbolic link")

// NewStage starts a set of outputs. Without force an existing destination is refused, when
// it is created and again when it is committed.
func NewStage(force bool) *Stage { return &Stage{force: force, dirs: map[string]*outDir{}} }

// NewStageIn starts a set of outputs that all go in dir, created if needed: an output path
// outside dir, or through a symbolic link inside it (a subdirectory that is a link), is
// refused with an error wrapping ErrOutsideOutputDir, so nothing is ever written outside
// dir. dir itself may be a symbolic link. With force a symbolic link at an output's name is
// replaced by the output, never written through.
func NewStageIn(dir string, force bool) (*Stage, error) {
	s := NewStage(force)
	if err := s.MkdirAll(dir); err != nil {
		return nil, err
	}
	within, err := openOutDir(dir)
	if err != nil {
		s.Abort()
		return nil, err
	}
	s.within = within
	return s, nil
}

// Keep names the inputs of the work: an output that is one of them (the same file, by any
// name) is refused, with force too, with an error wrapping ErrOutputIsInput. Paths that do
// not exist, and "-" (standard input), are skipped.
func (s *Stage) Keep(paths ...string) { s.kept = append(s.kept, statInputs(paths)...) }

// CheckOutput refuses, as Stage.Keep does, a dest that is one of inputs; a caller can so
// refuse it before any work.
func CheckOutput(dest string, inputs ...string) error {
	if info, err := os.Stat(dest); err == nil {
		return checkNotInput(dest, info, statInputs(inputs))
	}
	return nil
}

func statInputs(paths []string) []keptFile {
	var kept []keptFile
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if info, err := os.Stat(p); err == nil {
			kept = append(kept, keptFile{p, info})
		}
	}
	return kept
}

// checkNotKept refuses a dest, as found in dir, that is one of the kept inputs. A link there
// leading out of dir is followed too: it names the file it leads to.
func (s *Stage) checkNotKept(dir *outDir, dest string) error {
	info, err := dir.root.Stat(filepath.Base(dest))
	if err != nil {
		info, err = os.Stat(dest)
	}
	if err == nil {
		return checkNotInput(dest, info, s.kept)
	}
	return nil
}

// checkNotStaged refuses a dest that is one of the outputs already started, by any name
// (SameFile): the later would replace the earlier.
func (s *Stage) checkNotStaged(dest string) error {
	for _, sf := range s.files {
		if SameFile(sf.dest, dest) {
			return fmt.Errorf("writing %s: %w (%s); give each output its own name", dest, ErrSameOutput, sf.dest)
		}
	}
	return nil
}

// checkNotInput refuses dest, whose file is info, when it is one of kept.
func checkNotInput(dest string, info fs.FileInfo, kept []keptFile) error {
	for _, k := range kept {
		if !os.SameFile(info, k.info) {
			continue
		}
		if filepath.Clean(k.path) == filepath.Clean(dest) {
			return fmt.Errorf("writing %s: %w; name another output", dest, ErrOutputIsInput)
		}
		return fmt.Errorf("writing %s: %w (%s); name another output", dest, ErrOutputIsInput, k.path)
	}
	return nil
}

// Create starts the output dest and returns the file to write it to; perm is the mode asked
// for the new file (before the umask): SecretPerm or PublicPerm. An existing dest is refused unless force (the error
// wraps fs.ErrExist), and so is one that a rename would not replace sensibly.
func (s *Stage) Create(dest string, perm fs.FileMode) (*os.File, error) {
	dir, err := s.outDir(dest)
	if err != nil {
		return nil, err
	}
	if err := s.checkNotKept(dir, dest); err != nil {
		return nil, err
	}
	if err := s.checkNotStaged(dest); err != nil {
		return nil, err
	}
	existed, err := checkReplaceable(dir, dest, s.force)
	if err != nil {
		return nil, err
	}
	t, err := createTemp(dir, perm)
	if err != nil {
		return nil, fmt.Errorf("writing %s: creating temporary file: %w", dest, err)
	}
	s.files = append(s.files, &stagedFile{dest: dest, tmp: t, existed: existed})
	return t.f, nil
}

// adopt makes the finished and synced temporary file t, in dest's directory, one of the
// outputs. Its maker keeps it: Commit gives it its name, and Abort leaves it to its maker.
func (s *Stage) adopt(t *tempFile, dest string) error {
	dir, err := s.outDir(dest)
	if err != nil {
		return err
	}
	if err := s.checkNotKept(dir, dest); err != nil {
		return err
	}
	if err := s.checkNotStaged(dest); err != nil {
		return err
	}
	existed, err := checkReplaceable(dir, dest, s.force)
	if err != nil {
		return err
	}
	s.files = append(s.files, &stagedFile{dest: dest, tmp: t, adopted: true, existed: existed})
	return nil
}

// outDir opens the directory of dest, once per stage.
func (s *Stage) outDir(dest string) (*outDir, error) {
	path := filepath.Dir(dest)
	if d, ok := s.dirs[path]; ok {
		return d, nil
	}
	var d *outDir
	var err error
	if s.within == nil {
		d, err = openOutDir(path)
	} else {
		d, err = s.within.openSubdir(dest, path)
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", dest, err)
	}
	s.dirs[path] = d
	return d, nil
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
					sf.tmp.dir.root.Remove(filepath.Base(sf.dest))
				}
			}
			s.Abort()
		}
	}()
	for _, sf := range s.files {
		if sf.adopted {
			continue
		}
		if err := sf.tmp.f.Sync(); err != nil {
			return fmt.Errorf("writing %s: syncing %s: %w", sf.dest, sf.tmp.label(), err)
		}
	}
	// Again just before any is named: an input may have been linked there meanwhile.
	for _, sf := range s.files {
		if err := s.checkNotKept(sf.tmp.dir, sf.dest); err != nil {
			return err
		}
	}
	// The temporary files stay open, and so locked, until they have their names: a sweep
	// in another run must not take one for a leftover.
	dirs := map[*outDir]bool{}
	for _, sf := range s.files {
		if err := sf.tmp.publish(filepath.Base(sf.dest), s.force); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return existsError(sf.dest)
			}
			return fmt.Errorf("writing %s: %w", sf.dest, err)
		}
		moved = append(moved, sf)
		dirs[sf.tmp.dir] = true
	}
	for dir := range dirs {
		syncDir(dir)
	}
	for _, sf := range s.files {
		if !sf.adopted {
			if err := sf.tmp.f.Close(); err != nil {
				return fmt.Errorf("writing %s: closing it: %w", sf.dest, err)
			}
		}
	}
	s.files, s.madeDirs = nil, nil // they hold the result now
	s.closeDirs()
	return nil
}

// Abort removes every temporary file and the directories made for the outputs. It is safe
// after Commit, which leaves it nothing to do.
func (s *Stage) Abort() {
	for _, sf := range s.files {
		if !sf.adopted {
			sf.tmp.discard()
		}
	}
	s.files = nil
	s.closeDirs()
	for _, d := range slices.Backward(s.madeDirs) {
		os.Remove(d) // only if empty
	}
	s.madeDirs = nil
}

func (s *Stage) closeDirs() {
	for _, d := range s.dirs {
		d.close()
	}
	clear(s.dirs)
	if s.within != nil {
		s.within.close()
		s.within = nil
	}
}

// MkdirAll creates dir and its missing parents for outputs; Abort removes those it made
// while they are empty. In a Stage made by NewStageIn, dir must be inside its directory and
// reached through no symbolic link.
func (s *Stage) MkdirAll(dir string) error {
	if s.within != nil {
		made, err := s.within.mkdirAll(dir)
		s.madeDirs = append(s.madeDirs, made...)
		return err
	}
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

// relInside returns path relative to d, refusing a path outside d.
func (d *outDir) relInside(path string) (string, error) {
	rel, err := filepath.Rel(d.path, path)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is outside %s (%w)", path, d.path, ErrOutsideOutputDir)
	}
	return rel, nil
}

// mkdirAll creates the directory path inside d and its missing parents, refusing any that
// is a symbolic link; it returns the paths of those it created.
func (d *outDir) mkdirAll(path string) (made []string, err error) {
	rel, err := d.relInside(path)
	if err != nil || rel == "." {
		return nil, err
	}
	sub := "."
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		sub = filepath.Join(sub, name)
		info, err := d.root.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := d.root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return made, err
			}
			made = append(made, d.join(sub))
			continue
		case err != nil:
			return made, err
		case info.Mode()&fs.ModeSymlink != 0:
			return made, fmt.Errorf("%s is a symbolic link (%w)", d.join(sub), ErrOutsideOutputDir)
		case !info.IsDir():
			return made, fmt.Errorf("%s is not a directory", d.join(sub))
		}
	}
	return made, nil
}

// openSubdir opens the directory path inside d, where dest goes, refusing one reached
// through a symbolic link.
func (d *outDir) openSubdir(dest, path string) (*outDir, error) {
	rel, err := d.relInside(path)
	if err != nil {
		return nil, err
	}
	sub := "."
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		sub = filepath.Join(sub, name)
		if info, err := d.root.Lstat(sub); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link (%w)", d.join(sub), ErrOutsideOutputDir)
		}
	}
	// OpenRoot itself refuses a link that would lead out, should one appear meanwhile.
	root, err := d.root.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &outDir{root: root, path: path}, nil
}

// checkReplaceable refuses, before any byte is written, an existing dest (in dir) without
// force and a dest that a rename would not replace sensibly; it reports whether dest exists.
// A symbolic link at dest is replaced with force, never followed.
func checkReplaceable(dir *outDir, dest string, force bool) (existed bool, err error) {
	info, err := dir.root.Lstat(filepath.Base(dest))
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

// linkThenUnlink moves oldname to newname in dir without replacing an existing newname:
// creating a link fails if newname exists.
func linkThenUnlink(dir *outDir, oldname, newname string) error {
	if err := dir.root.Link(oldname, newname); err != nil {
		return err
	}
	return dir.root.Remove(oldname)
}

// syncDir makes a rename in dir durable. Errors are ignored: the data itself is already synced
// and some filesystems cannot sync a directory.
func syncDir(dir *outDir) {
	if d, err := dir.root.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
}
