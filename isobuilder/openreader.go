package isobuilder

import (
	"fmt"
	"io"
)

// OpenReader parses the live ISO of size bytes that r reads: a file, or the bytes of an ISO
// at an HTTP origin. r must stay readable while the LiveISO is used; Close does not close
// it. Sinks copy through the kernel only when r is an *os.File.
func OpenReader(r io.ReaderAt, size int64) (*LiveISO, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative ISO size %d", size)
	}
	return parse(r, size, nil)
}
