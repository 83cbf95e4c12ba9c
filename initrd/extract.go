package initrd

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckExtractPath refuses an archive path that would land outside the directory it is
// extracted to: absolute paths, ".." components, and paths that name no file.
func CheckExtractPath(p string) error {
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || hasDotDot(p) {
		return fmt.Errorf("initrd: path %s contains path traversal", p)
	}
	if clean := filepath.Clean(filepath.FromSlash(p)); clean == "." {
		return fmt.Errorf("initrd: path %q names no file", p)
	}
	return nil
}
