package initrd

import (
	"fmt"
	"io"
	"path"

	"github.com/cavaliercoder/go-cpio"
)

// Modes coreos-installer gives the members it writes (spec 2.1).
const (
	dirMode  = cpio.ModeDir | 0o755
	fileMode = cpio.ModeRegular | 0o600
)

// maxNewcSize is the largest value a newc size field (8 hex digits) can hold.
const maxNewcSize = 1<<32 - 1

// WriteNewc writes files as one uncompressed newc archive: members sorted byte-wise, each file
// preceded by entries for its parent directories not yet written (mode 040755), regular files
// mode 0100600, uid/gid/mtime 0, nlink 1, trailer TRAILER!!! with nlink 1; deterministic bytes.
// Built on github.com/cavaliercoder/go-cpio's Writer. Rejects empty, absolute, "..", or
// non-clean paths with an error naming the path.
func WriteNewc(w io.Writer, files Files) error {
	paths := files.Paths()
	for _, p := range paths {
		if err := checkArchivePath(p); err != nil {
			return err
		}
		if len(files[p]) > maxNewcSize {
			return fmt.Errorf("initrd: file %q is %d bytes, more than newc cpio can hold (%d)", p, len(files[p]), maxNewcSize)
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := files[dir]; ok {
				return fmt.Errorf("initrd: archive path %q is a file and also the parent directory of %q", dir, p)
			}
		}
	}
	cw := cpio.NewWriter(w)
	written := map[string]bool{}
	for _, p := range paths {
		if err := writeParents(cw, p, written); err != nil {
			return err
		}
		data := files[p]
		// A zero ModTime is written as mtime 0; go-cpio numbers the inodes itself.
		if err := cw.WriteHeader(&cpio.Header{Name: p, Mode: fileMode, Links: 1, Size: int64(len(data))}); err != nil {
			return fmt.Errorf("initrd: writing %q: %w", p, err)
		}
		if _, err := cw.Write(data); err != nil {
			return fmt.Errorf("initrd: writing %q: %w", p, err)
		}
	}
	if err := cw.Close(); err != nil {
		return fmt.Errorf("initrd: writing cpio trailer: %w", err)
	}
	return nil
}

// writeParents writes a directory entry for each ancestor of p not yet in written, shallowest
// first, so that the kernel can create the file.
func writeParents(cw *cpio.Writer, p string, written map[string]bool) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		dir := p[:i]
		if written[dir] {
			continue
		}
		if err := cw.WriteHeader(&cpio.Header{Name: dir, Mode: dirMode, Links: 1}); err != nil {
			return fmt.Errorf("initrd: writing directory %q: %w", dir, err)
		}
		written[dir] = true
	}
	return nil
}
