//go:build !linux

package serve

import "os"

// dirSpace is unknown here (-1): the writes find out.
func dirSpace(dir string) (free int64, inRAM bool, err error) {
	_, err = os.Stat(dir)
	return -1, false, err
}

// createUnlinked creates a file in dir and removes its name at once; where an open file
// cannot be removed (Windows), there is no copy.
func createUnlinked(dir string) (*os.File, error) { return createTempUnlinked(dir) }

func reserve(*os.File, int64) error { return nil }
