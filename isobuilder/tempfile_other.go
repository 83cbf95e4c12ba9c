//go:build !linux

package isobuilder

import (
	"os"
)

func openUnnamed(*outDir, os.FileMode) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*outDir, *os.File, string) error { return errNoUnnamed }

// renameNoReplace renames oldname to newname in dir unless newname exists (the error then
// wraps fs.ErrExist).
func renameNoReplace(dir *outDir, oldname, newname string) error {
	return linkThenUnlink(dir, oldname, newname)
}
