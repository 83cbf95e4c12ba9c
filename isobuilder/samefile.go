package isobuilder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSameOutput is wrapped by the error for two outputs of one work that name one file: one
// would replace the other.
var ErrSameOutput = errors.New("two outputs are the same file")

// SameFile reports whether paths a and b name one file, the rule by which no two outputs,
// and no output and input, may be one: an existing file by any of its names (hard links,
// symbolic links, "." and "..", a linked directory), and for a file not yet there the
// directory entry it would be created at (a dangling link followed to where it points, the
// directory compared by identity). "" and "-" (standard input or output) are no file.
func SameFile(a, b string) bool {
	if a == "" || a == "-" || b == "" || b == "-" {
		return false
	}
	return identify(a).same(identify(b))
}

// fileIdentity is what a path names for SameFile.
type fileIdentity struct {
	file fs.FileInfo // the file reached, links followed; nil when there is none
	// The directory entry the path resolves to once every link is followed: its directory
	// (nil when missing, then dirPath, cleaned and absolute, stands for it) and name.
	dir     fs.FileInfo
	dirPath string
	name    string
}

// maxLinks bounds the links followed, as the kernel does (ELOOP after 40).
const maxLinks = 40

func identify(path string) fileIdentity {
	var id fileIdentity
	if info, err := os.Stat(path); err == nil {
		id.file = info
	}
	// Follow links at the final name, each relative to its real directory, as the kernel
	// does: a "../x" target in a linked directory leads out of the directory linked to.
	dir, name := realDir(filepath.Dir(path)), filepath.Base(path)
	for range maxLinks {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		dir, name = realDir(filepath.Dir(target)), filepath.Base(target)
	}
	id.dirPath, id.name = dir, name
	if info, err := os.Stat(dir); err == nil {
		id.dir = info
	}
	return id
}

// realDir is dir with its links resolved, absolute; as far as it exists.
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

func (a fileIdentity) same(b fileIdentity) bool {
	if a.file != nil && b.file != nil {
		return os.SameFile(a.file, b.file)
	}
	if a.name != b.name {
		return false
	}
	if a.dir != nil && b.dir != nil {
		return os.SameFile(a.dir, b.dir)
	}
	return a.dirPath == b.dirPath
}
