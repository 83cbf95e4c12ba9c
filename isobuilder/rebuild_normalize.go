package isobuilder

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// What go-diskfs would make vary between runs, set back to the source's values so that a
// rebuild gives the same bytes every time.

// normalizeVolume makes the rebuilt volume look like its source and come out the same on
// every run: the descriptors take the source's identifiers and dates, and every directory
// record and Rock Ridge time stamp takes the source's creation date, and owner root.
func normalizeVolume(src *LiveISO, out *os.File, newVol *Volume) error {
	srcDescs, err := rawDescriptors(src, src.size)
	if err != nil {
		return err
	}
	newDescs, err := rawDescriptors(out, fileSize(out))
	if err != nil {
		return err
	}
	var primary []byte
	for _, d := range srcDescs {
		if d.data[0] == descriptorPrimary {
			primary = d.data
			break
		}
	}
	if primary == nil {
		return errors.New("the source has no primary volume descriptor")
	}
	created := primary[813:830]
	stamp := shortDate(created)
	for _, nd := range newDescs {
		t := nd.data[0]
		if t != descriptorPrimary && t != descriptorSupplementary {
			continue
		}
		// A descriptor the source lacks (the Joliet one go-diskfs adds) takes the primary's
		// dates rather than the time of the rebuild.
		copy(nd.data[813:881], primary[813:881])
		for _, sd := range srcDescs {
			if sd.data[0] == t {
				copy(nd.data[8:72], sd.data[8:72])
				copy(nd.data[190:881], sd.data[190:881])
				break
			}
		}
		copy(nd.data[156+18:156+25], stamp)
		if _, err := out.WriteAt(nd.data, nd.offset); err != nil {
			return err
		}
		root := nd.data[156 : 156+rootRecordLen]
		dirs := []dirExtent{{binary.LittleEndian.Uint32(root[2:6]), binary.LittleEndian.Uint32(root[10:14])}}
		// go-diskfs points the Joliet tree's records at the primary directories; only the
		// path table reaches the Joliet directories it writes.
		tabled, err := pathTableDirs(out, fileSize(out), nd.data)
		if err != nil {
			return err
		}
		if err := normalizeTree(out, fileSize(out), append(dirs, tabled...), stamp, created); err != nil {
			return err
		}
	}
	return nil
}

type rawDescriptor struct {
	offset int64
	data   []byte
}

type readerAt interface {
	ReadAt(p []byte, off int64) (int, error)
}

func rawDescriptors(r readerAt, size int64) ([]rawDescriptor, error) {
	var out []rawDescriptor
	for i := range maxDescriptors {
		off := int64(descriptorLBA+i) * SectorSize
		b := make([]byte, SectorSize)
		if err := readAt(r, size, b, off); err != nil {
			return nil, err
		}
		if b[0] == descriptorTerminator {
			return out, nil
		}
		out = append(out, rawDescriptor{offset: off, data: b})
	}
	return nil, errors.New("no volume descriptor set terminator")
}

// shortDate converts a 17-byte descriptor date to the 7-byte form of directory records.
func shortDate(long []byte) []byte {
	num := func(s []byte) byte {
		n := 0
		for _, c := range s {
			if c >= '0' && c <= '9' {
				n = n*10 + int(c-'0')
			}
		}
		return byte(n)
	}
	if len(long) != 17 {
		return make([]byte, 7)
	}
	year := 0
	for _, c := range long[0:4] {
		year = year*10 + int(c-'0')
	}
	if year < 1900 {
		return make([]byte, 7)
	}
	return []byte{byte(year - 1900), num(long[4:6]), num(long[6:8]), num(long[8:10]), num(long[10:12]), num(long[12:14]), long[16]}
}

// dirExtent is where a directory's records are.
type dirExtent struct{ lba, length uint32 }

// pathTableDirs lists the directories of a volume's little-endian path table, each with the
// length its "." record gives.
func pathTableDirs(out *os.File, size int64, desc []byte) ([]dirExtent, error) {
	tableLen, tableLBA := binary.LittleEndian.Uint32(desc[132:136]), binary.LittleEndian.Uint32(desc[140:144])
	if tableLen > maxDirSize {
		return nil, fmt.Errorf("rebuilt path table at LBA %d is %d bytes", tableLBA, tableLen)
	}
	table := make([]byte, tableLen)
	if err := readAt(out, size, table, int64(tableLBA)*SectorSize); err != nil {
		return nil, err
	}
	var dirs []dirExtent
	dot := make([]byte, minRecordLen)
	for i := 0; i+8 <= len(table); {
		nameLen := int(table[i])
		lba := binary.LittleEndian.Uint32(table[i+2 : i+6])
		if err := readAt(out, size, dot, int64(lba)*SectorSize); err != nil {
			return nil, err
		}
		dirs = append(dirs, dirExtent{lba, binary.LittleEndian.Uint32(dot[10:14])})
		i += 8 + nameLen + nameLen%2
	}
	return dirs, nil
}

// normalizeTree walks the directory trees from the given extents, rewriting every record's
// date, Rock Ridge TF stamps and PX owner.
func normalizeTree(out *os.File, size int64, roots []dirExtent, stamp, longStamp []byte) error {
	var queue []dirExtent
	seen := map[uint32]bool{}
	for _, r := range roots {
		if !seen[r.lba] {
			seen[r.lba] = true
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if dir.length > maxDirSize {
			return fmt.Errorf("rebuilt directory at LBA %d is %d bytes", dir.lba, dir.length)
		}
		buf := make([]byte, dir.length)
		if err := readAt(out, size, buf, int64(dir.lba)*SectorSize); err != nil {
			return err
		}
		err := eachRecord(buf, func(_ int, rec []byte) (bool, error) {
			if len(rec) < minRecordLen || minRecordLen+int(rec[32]) > len(rec) {
				return false, fmt.Errorf("a malformed %d-byte record", len(rec))
			}
			copy(rec[18:25], stamp)
			nameLen := int(rec[32])
			if su := systemUseStart(nameLen); su < len(rec) {
				if err := normalizeSUSP(out, size, rec[su:], stamp, longStamp, 0); err != nil {
					return false, err
				}
			}
			name := rec[minRecordLen : minRecordLen+nameLen]
			isDotEntry := nameLen == 1 && (name[0] == 0 || name[0] == 1)
			if rec[25]&2 != 0 && !isDotEntry {
				lba := binary.LittleEndian.Uint32(rec[2:6])
				if !seen[lba] {
					seen[lba] = true
					queue = append(queue, dirExtent{lba, binary.LittleEndian.Uint32(rec[10:14])})
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("rebuilt directory at LBA %d: %w", dir.lba, err)
		}
		if _, err := out.WriteAt(buf, int64(dir.lba)*SectorSize); err != nil {
			return err
		}
	}
	return nil
}

// normalizeSUSP rewrites the TF and PX entries of a system use area, following one level of
// continuation area.
func normalizeSUSP(out *os.File, size int64, area, stamp, longStamp []byte, depth int) error {
	var err error
	eachSUSPEntry(area, func(sig string, e []byte) bool {
		switch sig {
		case "TF":
			width := 7
			if e[4]&0x80 != 0 {
				width = 17
			}
			for pos := 5; pos+width <= len(e); pos += width {
				if width == 7 {
					copy(e[pos:], stamp)
				} else {
					copy(e[pos:], longStamp)
				}
			}
		case "PX":
			if len(e) >= 36 {
				clear(e[20:36]) // uid and gid, both byte orders
			}
		case "CE":
			if c, ok := parseCE(e); ok && c.inSector() && depth < maxContinuations {
				err = normalizeContinuation(out, size, c, stamp, longStamp, depth)
			}
		}
		return err == nil
	})
	return err
}

// normalizeContinuation normalizes the SUSP entries of a continuation area in place.
func normalizeContinuation(out *os.File, size int64, c continuation, stamp, longStamp []byte, depth int) error {
	ce := make([]byte, c.length)
	if err := readAt(out, size, ce, c.at()); err != nil {
		return err
	}
	if err := normalizeSUSP(out, size, ce, stamp, longStamp, depth+1); err != nil {
		return err
	}
	_, err := out.WriteAt(ce, c.at())
	return err
}
