package initrd

import (
	"bytes"
	"fmt"
	"io"
)

const (
	newcHeaderLen = 110
	// maxNameSize bounds a member name, terminating NUL included (Linux's PATH_MAX).
	maxNameSize  = 4096
	trailerName  = "TRAILER!!!"
	modeTypeMask = 0o170000
	modeRegular  = 0o100000
)

// newc header fields, in order, after the 6-byte magic; each is 8 hex digits.
const (
	fieldIno = iota
	fieldMode
	fieldUID
	fieldGID
	fieldNlink
	fieldMtime
	fieldFilesize
	fieldDevMajor
	fieldDevMinor
	fieldRdevMajor
	fieldRdevMinor
	fieldNamesize
	fieldCheck
	newcFields
)

// readNewc reads one newc archive from r up to and including its trailer, storing in files
// the regular files that keep accepts, told their name and declared size (an error from it
// ends the read). b is the budget that r charges, so that a member's declared size is refused
// before its data is read.
func readNewc(r io.Reader, b *budget, keep func(name string, size int64) (bool, error), files Files) error {
	var pos int64 // offset in the archive, for errors
	read := func(p []byte) error {
		n, err := io.ReadFull(r, p)
		pos += int64(n)
		return err
	}
	skip := func(n int64) error {
		k, err := io.CopyN(io.Discard, r, n)
		pos += k
		return err
	}
	for {
		entry := pos
		var header [newcHeaderLen]byte
		if err := read(header[:]); err == io.EOF {
			return fmt.Errorf("truncated archive: it ends at offset %d without a %s entry", entry, trailerName)
		} else if err != nil {
			return truncated(err, fmt.Sprintf("archive: header at offset %d", entry))
		}
		if magic := string(header[:6]); magic != "070701" && magic != "070702" {
			return fmt.Errorf("entry at offset %d: bad newc magic %q", entry, magic)
		}
		var field [newcFields]int64
		for i := range field {
			v, err := parseHex(header[6+8*i : 14+8*i])
			if err != nil {
				return fmt.Errorf("entry at offset %d: header field %d: %w", entry, i, err)
			}
			field[i] = v
		}
		nameSize := field[fieldNamesize]
		if nameSize < 1 || nameSize > maxNameSize {
			return fmt.Errorf("entry at offset %d: name size %d is not between 1 and %d", entry, nameSize, maxNameSize)
		}
		rawName := make([]byte, nameSize)
		if err := read(rawName); err != nil {
			return truncated(err, fmt.Sprintf("archive: name of entry at offset %d", entry))
		}
		if rawName[nameSize-1] != 0 {
			return fmt.Errorf("entry at offset %d: name is not NUL-terminated", entry)
		}
		// dracut-cpio pads names with extra NULs; the name ends at the first one.
		name := string(rawName[:bytes.IndexByte(rawName, 0)])
		if err := skip(pad4(newcHeaderLen + nameSize)); err != nil {
			return truncated(err, fmt.Sprintf("archive: padding of %q", name))
		}
		if name == trailerName {
			return nil
		}
		size := field[fieldFilesize]
		if size > b.left {
			return errTooLarge(b.limit)
		}
		kept := false
		if field[fieldMode]&modeTypeMask == modeRegular {
			var err error
			if kept, err = keep(name, size); err != nil {
				return fmt.Errorf("entry at offset %d: %w", entry, err)
			}
		}
		if kept {
			data, err := readData(r, size)
			pos += int64(len(data))
			if err != nil {
				return truncated(err, fmt.Sprintf("archive: data of %q (%d of %d bytes)", name, len(data), size))
			}
			files[name] = data
		} else if err := skip(size); err != nil {
			return truncated(err, fmt.Sprintf("archive: data of %q", name))
		}
		if err := skip(pad4(size)); err != nil {
			return truncated(err, fmt.Sprintf("archive: padding after %q", name))
		}
	}
}

// readData reads size bytes from r. Its buffer doubles as data arrives instead of trusting the
// size a header claims, so a truncated archive costs memory for what it holds, not for what it
// declares. It returns the bytes read so far along with any error.
func readData(r io.Reader, size int64) ([]byte, error) {
	const firstChunk = 64 << 10
	data := make([]byte, min(size, firstChunk))
	n, err := io.ReadFull(r, data)
	for err == nil && int64(len(data)) < size {
		grow := min(size-int64(len(data)), int64(len(data)))
		data = append(data, make([]byte, grow)...)
		var k int
		k, err = io.ReadFull(r, data[n:])
		n += k
	}
	return data[:n], err
}

// pad4 is the number of NULs that bring n to a multiple of 4.
func pad4(n int64) int64 {
	return (4 - n%4) % 4
}

// parseHex decodes a newc header field: exactly 8 hex digits, either case.
func parseHex(b []byte) (int64, error) {
	var v int64
	for _, c := range b {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, fmt.Errorf("%q is not hexadecimal", b)
		}
		v = v<<4 | int64(d)
	}
	return v, nil
}
