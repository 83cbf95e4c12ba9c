package input

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/sno-iso/sno-iso/internal/redact"
)

// Open opens path with flag (os.O_RDONLY or os.O_RDWR) without waiting on what it names, and
// returns the file with its mode as the descriptor sees it: a named pipe without a writer,
// which open(2) would wait for forever, opens at once and is refused by the caller's check
// of the mode. Regular files and block devices ignore the non-blocking flag.
func Open(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag|openNonBlocking, 0)
	if err != nil {
		return nil, nil, hideURLCredentials(path, err)
	}
	return withMode(f)
}

// OpenInRoot is Open of name below root: a path that leaves root, through ".." or a
// symbolic link, is refused by os.Root.
func OpenInRoot(root *os.Root, name string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, flag|openNonBlocking, 0)
	if err != nil {
		return nil, nil, err
	}
	return withMode(f)
}

func withMode(f *os.File) (*os.File, fs.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// Kind names what a file of this mode is, for errors about files that are not regular.
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// hideURLCredentials shows a path that is a URL (scheme://...), taken for a file because the
// command does not fetch that scheme, as redact.URL does: its password and query (a
// pre-signed signature) are credentials, not for errors.
func hideURLCredentials(path string, err error) error {
	var pathErr *fs.PathError
	if strings.Contains(path, "://") && errors.As(err, &pathErr) {
		pathErr.Path = redact.URL(path)
	}
	return err
}
