// Package filestamp tells whether a file was replaced or written between two looks at it, to
// the file system's time resolution: what a server that re-reads its inputs when they
// change compares.
package filestamp

import (
	"errors"
	"io/fs"
	"os"
)

// Stamp is what a stat tells of a file's identity and version; two equal stamps mean the file
// was not replaced or written in between. The zero Stamp is that of no file.
type Stamp struct {
	info fs.FileInfo // nil when the file does not exist
	err  string      // why it could not be stat'ed, other than not existing
}

// Of stats the file at path.
func Of(path string) Stamp {
	info, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Stamp{err: err.Error()}
	}
	return Stamp{info: info}
}

// Exists reports whether the file existed.
func (s Stamp) Exists() bool { return s.info != nil }

// Same reports whether s and o are the same version of the same file, or both of no file
// (for the same reason).
func (s Stamp) Same(o Stamp) bool {
	if s.info == nil || o.info == nil {
		return s.info == nil && o.info == nil && s.err == o.err
	}
	return os.SameFile(s.info, o.info) && SameVersion(s.info, o.info)
}

// SameVersion reports whether two stats of one file show no write in between: the same size,
// modification time and, where the system has one, status change time.
func SameVersion(a, b fs.FileInfo) bool {
	if a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	ac, aok := ChangeTime(a)
	bc, bok := ChangeTime(b)
	return aok == bok && ac.Equal(bc)
}
