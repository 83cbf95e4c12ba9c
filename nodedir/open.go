package nodedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sno-iso/sno-iso/internal/input"
)

// LinkOutError is a node's file that leads outside the node directory: through "..", or a
// symbolic link (of the file or of a directory on its way) whose target is elsewhere.
type LinkOutError struct {
	File string // the file, as named
	Dir  string // the node directory
	// Target is where the links lead, "" when it could not be resolved.
	Target string
}

func (e *LinkOutError) Error() string {
	target := ""
	if e.Target != "" {
		target = " (to " + e.Target + ")"
	}
	return fmt.Sprintf("%s leads outside the node directory %s%s: a node's files must be inside its directory; "+
		"copy the file into it", e.File, e.Dir, target)
}

// OpenIn opens the file path (absolute, or relative to the working directory) of the node
// directory dir for reading, as input.OpenRegular does, and only when it stays inside dir:
// every component is resolved below dir (os.Root), so neither ".." nor a symbolic link,
// swapped in at any time, leads a read out of the node. A link that stays inside is
// followed. The caller closes the file.
func OpenIn(dir, path, what string) (*os.File, fs.FileInfo, error) {
	rel, err := relIn(dir, path)
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	// Not waiting on a named pipe without a writer: it is refused below, as input refuses it.
	f, info, err := input.OpenInRoot(root, rel, os.O_RDONLY)
	if err != nil {
		return nil, nil, confineError(dir, path, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w but %s; %s must be a regular file", path, input.ErrNotRegular, input.Kind(info.Mode()), what)
	}
	return f, info, nil
}

// ReadFileIn reads the file path of the node directory dir as OpenIn opens it, refusing more
// than limit bytes, as input.ReadFile does.
func ReadFileIn(dir, path string, limit int64, what string) ([]byte, error) {
	f, _, err := OpenIn(dir, path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return input.Read(f, path, limit, what)
}

// statIn is os.Stat of a node's file, confined as OpenIn is.
func statIn(dir, path string) (fs.FileInfo, error) {
	rel, err := relIn(dir, path)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	info, err := root.Stat(rel)
	if err != nil {
		return nil, confineError(dir, path, err)
	}
	return info, nil
}

// relIn is path relative to dir, or a *LinkOutError when it is lexically outside.
func relIn(dir, path string) (string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absPath, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if !within(absDir, absPath) {
		return "", &LinkOutError{File: path, Dir: dir}
	}
	return filepath.Rel(absDir, absPath)
}

// confineError turns os.Root's refusal of an escaping path into a *LinkOutError that names
// where the links lead; other errors pass unchanged.
func confineError(dir, path string, err error) error {
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) || pathErr.Err.Error() != "path escapes from parent" {
		return err
	}
	// For the message only: what was read is decided by os.Root above.
	target, _ := filepath.EvalSymlinks(path)
	return &LinkOutError{File: path, Dir: dir, Target: target}
}
