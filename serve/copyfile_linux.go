//go:build linux

package serve

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dirSpace says what an unprivileged writer may still write in dir's file system, and
// whether that is a tmpfs, whose files are memory.
func dirSpace(dir string) (free int64, inRAM bool, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	return int64(st.Bavail) * int64(st.Bsize), st.Type == unix.TMPFS_MAGIC, nil
}

// createUnlinked creates a file in dir that has no name (O_TMPFILE): it is gone when closed,
// even after a crash. File systems without O_TMPFILE get a named file removed at once.
func createUnlinked(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE, 0o600)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) {
		return createTempUnlinked(dir)
	}
	return f, err
}

// reserve allocates size bytes for f now: a disk too small fails the copy at once, not after
// most of the object was read. A file system that cannot allocate ahead is left to the writes.
func reserve(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("fallocate: %w", err)
	}
	return nil
}
