package nodedir

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
)

// OutsideError is a file named in a node's sno.yaml that resolves outside the node's
// directory: through "..", as an absolute path elsewhere, or through a symbolic link.
type OutsideError struct {
	Config string // the sno.yaml, as named
	Key    string // the key that names the file, such as network.keyfiles
	File   string // the file, resolved against the node directory
	Dir    string // the node directory
	// Target is where a symbolic link led, "" when the path itself is outside.
	Target string
}

func (e *OutsideError) Error() string {
	if e.Target != "" {
		return fmt.Sprintf("%s: %s names %s, a symbolic link to %s outside the node directory %s: "+
			"copy the file into the node directory", e.Config, e.Key, e.File, e.Target, e.Dir)
	}
	return fmt.Sprintf("%s: %s names %s, outside the node directory %s: "+
		"a node's files must be inside its directory (no ../, no absolute path elsewhere)", e.Config, e.Key, e.File, e.Dir)
}

// CheckConfined checks that every file cfg names (coreos.Config.Files: network keyfiles,
// customizations, the BMC credentials file, ...) resolves inside cfg's directory, the node
// directory, also after following symbolic links. A file that does not exist is left to the
// reader to report.
func CheckConfined(cfg *coreos.Config) error {
	dir := filepath.Clean(cfg.Dir)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	check := func(key, file string) error {
		outside := &OutsideError{Config: cfg.Path, Key: key, File: file, Dir: dir}
		if !within(dir, file) {
			return outside
		}
		target, err := filepath.EvalSymlinks(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", cfg.Path, key, err)
		}
		if !within(realDir, target) {
			outside.Target = target
			return outside
		}
		return nil
	}
	for _, f := range cfg.Files() {
		key := f.Key
		if key == "" {
			key = "a key"
		}
		if err := check(key, f.Path); err != nil {
			return err
		}
	}
	return nil
}

// within reports whether path is dir or below it; both are clean.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
