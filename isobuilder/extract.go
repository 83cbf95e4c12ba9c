package isobuilder

import (
	"fmt"
	"path/filepath"

	"github.com/sno-iso/sno-iso/initrd"
)

// ExtractFiles writes files (an initramfs payload, such as the embedded network keyfiles)
// under dir, all or nothing, through one Stage confined to dir: a path that would leave dir
// or pass through a symbolic link in it is refused, and so is an existing destination (the
// error wraps fs.ErrExist), before anything is written. Files are the owner's only
// (SecretPerm): keyfiles hold passwords. It returns the paths written, in the files' order.
func ExtractFiles(files initrd.Files, dir string) ([]string, error) {
	return WriteFiles(files, dir, false)
}

// WriteFiles writes files under dir as ExtractFiles does; with force an existing
// destination is replaced. inputs are files the work read: none of them is overwritten.
func WriteFiles(files initrd.Files, dir string, force bool, inputs ...string) ([]string, error) {
	paths := files.Paths()
	for _, p := range paths {
		if err := initrd.CheckExtractPath(p); err != nil {
			return nil, err
		}
	}
	stage, err := NewStageIn(dir, force)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	stage.Keep(inputs...)
	dests := make([]string, len(paths))
	for i, p := range paths {
		dests[i] = filepath.Join(dir, filepath.FromSlash(p))
		if err := stage.MkdirAll(filepath.Dir(dests[i])); err != nil {
			return nil, fmt.Errorf("writing %s: %w", dests[i], err)
		}
		f, err := stage.Create(dests[i], SecretPerm)
		if err != nil {
			return nil, extractError(err)
		}
		if _, err := f.Write(files[p]); err != nil {
			return nil, fmt.Errorf("writing %s: %w", dests[i], err)
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, extractError(err)
	}
	return dests, nil
}
