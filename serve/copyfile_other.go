//go:build !linux

package serve

import "os"

// freeSpace is unknown here (-1): the writes find out.
func freeSpace(dir string) (int64, error) {
	_, err := os.Stat(dir)
	return -1, err
}

// createUnlinked creates a file in dir and removes its name at once; where an open file
// cannot be removed (Windows), there is no copy.
func createUnlinked(dir string) (*os.File, error) { return createTempUnlinked(dir) }

func reserve(*os.File, int64) error { return nil }
