package initrd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Extract writes files under dir, refusing absolute paths and paths that contain ".."
// components (error: path X contains path traversal) before writing anything, and refusing to
// overwrite existing files (create-new), which it also checks for before writing anything.
// Parent directories are created 0755, files 0600 (they may hold keys or passwords). It returns the filesystem paths written
// (dir joined with each archive path), sorted; on error, those written so far.
func Extract(files Files, dir string) ([]string, error) {
	paths := files.Paths()
	targets := make([]string, len(paths))
	for i, p := range paths {
		if err := checkExtractPath(p); err != nil {
			return nil, err
		}
		targets[i] = filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Lstat(targets[i]); err == nil {
			return nil, fmt.Errorf("initrd: extracting %q: %s already exists", p, targets[i])
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("initrd: extracting %q: %w", p, err)
		}
	}
	var written []string
	for i, p := range paths {
		if err := writeNew(targets[i], files[p]); err != nil {
			return written, fmt.Errorf("initrd: extracting %q: %w", p, err)
		}
		written = append(written, targets[i])
	}
	return written, nil
}

// checkExtractPath refuses paths that would land outside the extraction directory.
func checkExtractPath(p string) error {
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || hasDotDot(p) {
		return fmt.Errorf("initrd: path %s contains path traversal", p)
	}
	if clean := filepath.Clean(filepath.FromSlash(p)); clean == "." {
		return fmt.Errorf("initrd: path %q names no file", p)
	}
	return nil
}

// writeNew creates path (never replacing an existing file) and its parent directories.
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// Configs and keyfiles hold keys and passwords: the owner's only, whatever the umask.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
