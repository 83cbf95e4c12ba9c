// Package input reads the files users hand to sno-iso (Ignition configs, sno.yaml,
// keyfiles, customizations) with one bound: a file that is not regular, or larger than
// what such a file can be, is refused before it is held in memory. Open is the one way
// sno-iso opens what a user names (inputs and ISOs): it never waits on a named pipe.
package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TooLargeError says that an input exceeds the size its kind of file can have.
type TooLargeError struct {
	Name  string // the file, or "standard input"
	Limit int64
	What  string // what the input should have been, e.g. "an Ignition config"
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s: that is not %s", e.Name, sizeText(e.Limit), e.What)
}

// ErrNotRegular says that an input path names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the file at path, refusing more than limit bytes and anything but a regular
// file, checked before the first read (a named pipe in a directory could block it forever);
// what names the kind of file expected, for the error. Two exceptions keep shell habits
// working, as with coreos-installer: the null device reads as an empty file (`-i /dev/null`),
// and a pipe named through a descriptor (`-i <(...)`, `-i /dev/stdin`) is read to its end.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, _, err := OpenRegular(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, limit, what)
}

// OpenRegular opens the file at path for reading as ReadFile does, with the same refusals
// and exceptions, for a caller that reads it as a stream or wants its mode; the caller
// closes it.
func OpenRegular(path, what string) (*os.File, fs.FileInfo, error) {
	f, info, err := Open(path, os.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() && !isNullDevice(info) && !isDescriptorPipe(path, info) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w but %s; %s must be a regular file", path, ErrNotRegular, Kind(info.Mode()), what)
	}
	return f, info, nil
}

// isDescriptorPipe reports whether path names a pipe through one of the process's
// descriptors, which a shell made for this command, rather than a named pipe in a directory.
func isDescriptorPipe(path string, info os.FileInfo) bool {
	if info.Mode()&os.ModeNamedPipe == 0 {
		return false
	}
	path = filepath.ToSlash(filepath.Clean(path))
	return path == "/dev/stdin" || strings.HasPrefix(path, "/dev/fd/") || strings.HasPrefix(path, "/proc/self/fd/")
}

func isNullDevice(info os.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && info.Mode()&os.ModeCharDevice != 0 && os.SameFile(info, null)
}

// Read reads r to its end, refusing more than limit bytes; name and what are for errors.
func Read(r io.Reader, name string, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit, What: what}
	}
	return data, nil
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
