// Package input reads the files users hand to sno-iso (Ignition configs, sno.yaml,
// keyfiles, customizations) with one bound: a file that is not regular, or larger than
// what such a file can be, is refused before it is held in memory.
package input

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// ErrNotRegular says that an input path names a directory.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the file at path, refusing more than limit bytes and a directory; what
// names the kind of file expected, for the error. Pipes and /dev/null are read like files.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: %w but a directory (%s expected)", path, ErrNotRegular, what)
	}
	return Read(f, path, limit, what)
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
