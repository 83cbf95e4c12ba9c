package isobuilder

import (
	"encoding/binary"
	"fmt"
)

// The walking of directory records and SUSP entries, shared by the reader and the rebuild
// normaliser so that both see the same records.

// incompleteRecordError is a record whose length byte claims more than the directory holds.
type incompleteRecordError struct {
	at, claimed, left int
}

func (e *incompleteRecordError) Error() string {
	return fmt.Sprintf("incomplete directory record at byte %d: %d bytes claimed, %d left", e.at, e.claimed, e.left)
}

// eachRecord calls fn with the offset and bytes of every directory record of a directory
// extent, until fn returns false or an error. Records do not cross sectors: a zero length
// byte pads to the next sector. The boundary is computed from the byte after the zero, as
// coreos-installer does: a zero in the last byte of a sector (only possible after odd-length
// records) skips the following sector too, so the same records stay hidden from both tools.
func eachRecord(dir []byte, fn func(at int, rec []byte) (bool, error)) error {
	for i := 0; i < len(dir); {
		n := int(dir[i])
		if n == 0 {
			i = ((i+1)/SectorSize + 1) * SectorSize
			continue
		}
		if i+n > len(dir) {
			return &incompleteRecordError{at: i, claimed: n, left: len(dir) - i}
		}
		more, err := fn(i, dir[i:i+n])
		if err != nil || !more {
			return err
		}
		i += n
	}
	return nil
}

// systemUseStart is where a record's system use area begins: after the name and the pad
// byte that keeps it at an even offset.
func systemUseStart(nameLen int) int {
	return minRecordLen + nameLen + (nameLen+1)%2
}

// eachSUSPEntry calls fn with the signature and bytes of every SUSP entry of a system use
// area, up to an ST entry or until fn returns false. It assumes the SUSP skip length is 0, as
// every writer in use sets it. ok is false when an entry's length makes no sense.
func eachSUSPEntry(area []byte, fn func(sig string, entry []byte) bool) (ok bool) {
	for len(area) >= 4 {
		n := int(area[2])
		if n < 4 || n > len(area) {
			return false
		}
		entry := area[:n]
		area = area[n:]
		sig := string(entry[:2])
		if sig == "ST" || !fn(sig, entry) {
			return true
		}
	}
	return true
}

type continuation struct{ block, offset, length uint32 }

// at is the byte offset of the continuation area in the image.
func (c continuation) at() int64 { return int64(c.block)*SectorSize + int64(c.offset) }

// inSector reports whether the continuation area stays within its sector, as it must.
func (c continuation) inSector() bool {
	return c.offset < SectorSize && c.length <= SectorSize-c.offset
}

// parseCE decodes a CE entry; ok is false when it is too short to be one.
func parseCE(entry []byte) (c continuation, ok bool) {
	if len(entry) < 28 {
		return c, false
	}
	return continuation{
		block:  binary.LittleEndian.Uint32(entry[4:8]),
		offset: binary.LittleEndian.Uint32(entry[12:16]),
		length: binary.LittleEndian.Uint32(entry[20:24]),
	}, true
}
