package embed

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// SystemAreaSize is the ISO9660 system area before the first volume descriptor; the legacy
// coreiso+ and coreKarg headers live at its end.
const SystemAreaSize = 32768

// ISO is the view of a live ISO that the embed areas need: its bytes and a lookup of files by
// their uppercase ISO9660 primary path, exactly as coreos-installer looks them up.
type ISO interface {
	io.ReaderAt
	// Size is the length of the ISO file in bytes.
	Size() int64
	// Locate returns the byte offset and length of the file at an uppercase primary path
	// such as "COREOS/IGNINFO.JSO". A missing file gives an error matching fs.ErrNotExist.
	Locate(path string) (offset, length int64, err error)
}

// maxMetadataFile bounds the JSON files read from an ISO (igninfo, kargs, features): the real
// ones are well under 4 KiB, so anything larger is corruption, not data.
const maxMetadataFile = 1 << 20

// readFile reads a small file of the ISO. found is false when the file does not exist.
func readFile(iso ISO, path string) (data []byte, found bool, err error) {
	off, length, err := iso.Locate(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("looking up %s: %w", path, err)
	}
	if length > maxMetadataFile {
		return nil, true, fmt.Errorf("%s is %d bytes, more than the %d a CoreOS metadata file can be; "+
			"corrupt ISO?", path, length, maxMetadataFile)
	}
	data, err = readSpan(iso, off, length, path)
	return data, true, err
}

// readSpan reads length bytes at off, checking that they lie inside the ISO.
func readSpan(iso ISO, off, length int64, what string) ([]byte, error) {
	if off < 0 || length < 0 || length > iso.Size()-off {
		return nil, fmt.Errorf("%s (%d bytes at byte %d) lies outside the ISO (%d bytes); "+
			"the ISO image is incomplete or corrupt", what, length, off, iso.Size())
	}
	buf := make([]byte, length)
	if _, err := iso.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("reading %s at byte %d: %w", what, off, err)
	}
	return buf, nil
}
