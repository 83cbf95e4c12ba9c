package isobuilder

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/sno-iso/sno-iso/internal/safetext"
)

// SectorSize is the ISO9660 logical block size. Like coreos-installer, no other size is
// supported.
const SectorSize = 2048

const (
	// descriptorLBA is where the volume descriptor set starts.
	descriptorLBA = 16
	// maxDescriptors bounds the descriptor loop: real ISOs have four or five, and an image
	// without a terminator would otherwise be read to its end.
	maxDescriptors = 64
	// maxDirSize refuses directory extents larger than any real directory, so that a corrupt
	// length field cannot force a huge allocation.
	maxDirSize = 16 << 20
	// maxWalkDepth bounds Walk's recursion; ISO9660 itself allows 8 levels, Rock Ridge more.
	maxWalkDepth = 64
	// maxContinuations bounds the Rock Ridge continuation areas followed for one record.
	maxContinuations = 8
	// continuationBytesPerDirByte bounds the continuation bytes read for a whole directory,
	// relative to its size, so that records that all point at continuation areas cannot turn
	// one directory listing into gigabytes of reads.
	continuationBytesPerDirByte = 4
	// minRecordLen is the fixed part of a directory record, before the name.
	minRecordLen = 33
	// rootRecordLen is the size of the root directory record inside the primary descriptor.
	rootRecordLen = 34
)

const (
	descriptorBoot          = 0
	descriptorPrimary       = 1
	descriptorSupplementary = 2
	descriptorTerminator    = 255
)

// Record is one directory record of the primary volume.
type Record struct {
	Name          string // normalised primary name, e.g. "IGNINFO.JSO", "." for the root
	RockRidgeName string // Rock Ridge NM name when present, e.g. "igninfo.json"
	LBA           uint32
	Length        uint32
	Dir           bool
}

// Offset returns the byte offset of the record's extent in the ISO.
func (r Record) Offset() int64 { return int64(r.LBA) * SectorSize }

// displayName prefers the Rock Ridge name, which is what users see when they mount the ISO.
func (r Record) displayName() string {
	if r.RockRidgeName != "" {
		return r.RockRidgeName
	}
	return r.Name
}

// Descriptor is one volume descriptor, for display and for the structures that no embed
// area may overlap.
type Descriptor struct {
	Type      string // "primary", "boot", "supplementary", "unknown"
	TypeCode  byte   // the descriptor's type byte, which tells the unknown ones apart
	SystemID  string
	VolumeID  string
	SpaceSize uint32 // primary descriptors only: the volume's size in sectors
	// Root is the root directory record: parsed in primary descriptors; in supplementary
	// ones (Joliet) only its extent, as nothing reads that tree.
	Root Record
	// PathTableSize and PathTables (the sectors of the L and M tables, optional ones
	// included when present) of primary and supplementary descriptors.
	PathTableSize uint32
	PathTables    []uint32
	BootSystemID  string // boot records only
	BootID        string
	// BootCatalogLBA is the El Torito boot catalog's sector; 0 in other boot records.
	BootCatalogLBA uint32
}

// elToritoID is the boot system id of the El Torito boot record.
const elToritoID = "EL TORITO SPECIFICATION"

// Volume is the first primary volume of an ISO. Its methods only read through the
// io.ReaderAt, so a Volume may be used from several goroutines.
type Volume struct {
	SystemID    string
	VolumeID    string
	SpaceSize   uint32 // sectors
	Descriptors []Descriptor
	Root        Record

	r    io.ReaderAt
	size int64
}

// NotFoundError reports a path that does not resolve in the primary directory tree. Several
// callers treat it as "feature absent", so errors.Is(err, fs.ErrNotExist) holds for it.
type NotFoundError struct {
	Path      string // the path as passed to Lookup
	Component string // the first component that did not resolve
	Dir       string // the directory it was looked for in, "/" for the root
	// Intermediate is set when Component was needed as a directory on the way to the last
	// component; NotDir when it exists but is a file.
	Intermediate bool
	NotDir       bool
}

func (e *NotFoundError) Error() string {
	// The path may come from a crafted ISO's own files (igninfo.json, kargs.json): escaped,
	// it cannot drive the terminal or forge lines.
	component, path, dir := safetext.Escape(e.Component), safetext.Escape(e.Path), safetext.Escape(e.Dir)
	switch {
	case e.NotDir:
		return fmt.Sprintf("component %q in path %s is not a directory", e.Component, path)
	case e.Intermediate:
		return fmt.Sprintf("intermediate directory %s does not exist in directory %s", component, dir)
	default:
		return fmt.Sprintf("no record for %s in directory %s", component, dir)
	}
}

// Is makes errors.Is(err, fs.ErrNotExist) true.
func (e *NotFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// ReadVolume reads the volume descriptors from LBA 16 on, up to the terminator, and keeps the
// first primary volume. It checks that the file holds the whole volume.
func ReadVolume(r io.ReaderAt, size int64) (*Volume, error) {
	v := &Volume{r: r, size: size}
	sector := make([]byte, SectorSize)
	havePrimary := false
	for i := 0; ; i++ {
		off := int64(descriptorLBA+i) * SectorSize
		if i == maxDescriptors {
			return nil, fmt.Errorf("no volume descriptor set terminator in the %d sectors from byte %d; not an ISO9660 image?",
				maxDescriptors, int64(descriptorLBA)*SectorSize)
		}
		if err := readAt(r, size, sector, off); err != nil {
			return nil, fmt.Errorf("reading volume descriptor #%d: %w; truncated file or not an ISO9660 image?", i+1, err)
		}
		if sector[0] == descriptorTerminator {
			break
		}
		d, err := parseDescriptor(sector)
		if err != nil {
			return nil, fmt.Errorf("volume descriptor #%d at byte %d: %w", i+1, off, err)
		}
		if d.Type == "primary" && !havePrimary {
			havePrimary = true
			v.SystemID, v.VolumeID, v.SpaceSize, v.Root = d.SystemID, d.VolumeID, d.SpaceSize, d.Root
		}
		v.Descriptors = append(v.Descriptors, d)
	}
	if !havePrimary {
		return nil, errors.New("no primary volume descriptor found in ISO")
	}
	if want := int64(v.SpaceSize) * SectorSize; want > size {
		return nil, fmt.Errorf("ISO image is incomplete: the volume is %d bytes (%d sectors) but the file is %d bytes; download or copy it again",
			want, v.SpaceSize, size)
	}
	return v, nil
}

// parseDescriptor parses one volume descriptor sector other than the terminator. Only boot
// records and primary descriptors are checked and parsed.
func parseDescriptor(s []byte) (d Descriptor, err error) {
	d.TypeCode = s[0]
	switch s[0] {
	case descriptorBoot:
		d.Type = "boot"
		if err = checkDescriptorHeader(s); err != nil {
			return d, fmt.Errorf("boot record: %w", err)
		}
		if d.BootSystemID, err = parseString(s[7:39], aString); err != nil {
			return d, fmt.Errorf("boot record: boot system id: %w", err)
		}
		if d.BootID, err = parseString(s[39:71], aString); err != nil {
			return d, fmt.Errorf("boot record: boot id: %w", err)
		}
		if strings.HasPrefix(d.BootSystemID, elToritoID) {
			d.BootCatalogLBA = binary.LittleEndian.Uint32(s[71:75])
		}
	case descriptorPrimary:
		d.Type = "primary"
		if err = checkDescriptorHeader(s); err != nil {
			return d, fmt.Errorf("primary descriptor: %w", err)
		}
		if d.SystemID, err = parseString(s[8:40], aString); err != nil {
			return d, fmt.Errorf("primary descriptor: system id: %w", err)
		}
		// Volume ids should be d-strings, but non-compliance is common.
		if d.VolumeID, err = parseString(s[40:72], aString); err != nil {
			return d, fmt.Errorf("primary descriptor: volume id: %w", err)
		}
		d.SpaceSize = binary.LittleEndian.Uint32(s[80:84])
		if d.Root, err = parseRootRecord(s[156 : 156+rootRecordLen]); err != nil {
			return d, fmt.Errorf("primary descriptor: root directory record at byte 156: %w", err)
		}
		d.PathTableSize, d.PathTables = parsePathTables(s)
	case descriptorSupplementary:
		// Joliet: its tree is never read, but sno-iso must not write over it.
		d.Type = "supplementary"
		d.Root = Record{LBA: binary.LittleEndian.Uint32(s[158:162]), Length: binary.LittleEndian.Uint32(s[166:170]), Dir: true}
		d.PathTableSize, d.PathTables = parsePathTables(s)
	default:
		d.Type = "unknown"
	}
	return d, nil
}

// parsePathTables reads the path table size and the sectors of the tables that are present
// (type L, optional L, type M, optional M) from a primary or supplementary descriptor.
func parsePathTables(s []byte) (size uint32, sectors []uint32) {
	for _, lba := range []uint32{binary.LittleEndian.Uint32(s[140:144]), binary.LittleEndian.Uint32(s[144:148]),
		binary.BigEndian.Uint32(s[148:152]), binary.BigEndian.Uint32(s[152:156])} {
		if lba != 0 {
			sectors = append(sectors, lba)
		}
	}
	return binary.LittleEndian.Uint32(s[132:136]), sectors
}

func checkDescriptorHeader(s []byte) error {
	if string(s[1:6]) != "CD001" {
		return fmt.Errorf("unknown descriptor ID %q (want \"CD001\")", s[1:6])
	}
	if s[6] != 1 {
		return fmt.Errorf("unknown descriptor version %d (want 1)", s[6])
	}
	return nil
}

func parseRootRecord(b []byte) (Record, error) {
	n := int(b[0])
	if n == 0 || n > len(b) {
		return Record{}, fmt.Errorf("record length %d does not fit the %d-byte field; corrupt ISO?", n, len(b))
	}
	rec, err := parseRecord(b[:n], true)
	if err != nil {
		return Record{}, err
	}
	if rec.skip || !rec.Dir {
		return Record{}, errors.New("not a directory record; corrupt ISO?")
	}
	return rec.Record, nil
}

// rawRecord is a parsed directory record with its system use area, where Rock Ridge lives.
type rawRecord struct {
	Record
	systemUse []byte
	skip      bool // the "." or ".." entry of a directory
}

// parseRecord parses one directory record; b is exactly the record's bytes. The primary
// descriptor's root record is named "."; elsewhere "." and ".." are marked to be skipped.
func parseRecord(b []byte, isRoot bool) (rawRecord, error) {
	if len(b) < minRecordLen {
		return rawRecord{}, fmt.Errorf("record length %d is below the %d-byte minimum; corrupt ISO?", len(b), minRecordLen)
	}
	nameLen := int(b[32])
	if minRecordLen+nameLen > len(b) {
		return rawRecord{}, fmt.Errorf("name length %d runs past the %d-byte record; corrupt ISO?", nameLen, len(b))
	}
	rec := rawRecord{Record: Record{
		LBA:    binary.LittleEndian.Uint32(b[2:6]),
		Length: binary.LittleEndian.Uint32(b[10:14]),
		Dir:    b[25]&0x02 != 0,
	}}
	if suStart := systemUseStart(nameLen); suStart < len(b) {
		rec.systemUse = b[suStart:]
	}
	rawName := b[minRecordLen : minRecordLen+nameLen]
	if nameLen == 1 && (rawName[0] == 0 || rawName[0] == 1) {
		if isRoot && rawName[0] == 0 {
			rec.Name = "."
		} else {
			rec.skip = true
		}
		return rec, nil
	}
	name, err := parseString(rawName, fileName)
	if err != nil {
		return rawRecord{}, err
	}
	rec.Name = name
	return rec, nil
}

type stringKind int

const (
	aString  stringKind = iota // identifiers in volume descriptors
	fileName                   // directory record names
)

// parseString decodes an ISO9660 identifier the way coreos-installer does, which decides the
// names Lookup matches: file names lose ";1" and then one trailing ".", ';' and '/' in them
// become '.', a NUL ends the string, and any byte outside the allowed set is an error.
func parseString(b []byte, kind stringKind) (string, error) {
	raw := b
	if kind == fileName {
		b = bytesTrimSuffix(b, ";1")
		b = bytesTrimSuffix(b, ".")
	}
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == 0:
			return finishString(s.String(), kind), nil
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == ' ',
			strings.IndexByte(`!"%&'()*+,-.:<=>?`, c) >= 0:
			s.WriteByte(c)
		case c == ';' || c == '/':
			if kind == fileName {
				c = '.' // as the Linux kernel does
			}
			s.WriteByte(c)
		default:
			return "", fmt.Errorf("invalid string name %q: byte 0x%02x is not allowed", raw, c)
		}
	}
	return finishString(s.String(), kind), nil
}

func finishString(s string, kind stringKind) string {
	if kind == aString {
		return strings.TrimRight(s, " ")
	}
	return s
}

func bytesTrimSuffix(b []byte, suffix string) []byte {
	if len(b) >= len(suffix) && string(b[len(b)-len(suffix):]) == suffix {
		return b[:len(b)-len(suffix)]
	}
	return b
}

// readAt fills buf from offset off, refusing to read past size.
func readAt(r io.ReaderAt, size int64, buf []byte, off int64) error {
	end := off + int64(len(buf))
	if off < 0 || end > size {
		return fmt.Errorf("bytes %d..%d lie past the end of the ISO (%d bytes)", off, end, size)
	}
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading bytes %d..%d: %w", off, end, err)
}

// readExtent reads a whole directory extent, refusing extents that are implausibly large or
// lie past the end of the file. where names the directory in errors.
func (v *Volume) readExtent(dir Record, where string) ([]byte, error) {
	if !dir.Dir {
		return nil, fmt.Errorf("%s is not a directory", where)
	}
	if dir.Length > maxDirSize {
		return nil, fmt.Errorf("directory %s claims %d bytes, more than the %d bytes accepted for a directory; corrupt ISO?",
			where, dir.Length, maxDirSize)
	}
	if end := dir.Offset() + int64(dir.Length); end > v.size {
		return nil, fmt.Errorf("directory %s (LBA %d, %d bytes) ends at byte %d, past the end of the ISO (%d bytes); corrupt or truncated ISO?",
			where, dir.LBA, dir.Length, end, v.size)
	}
	buf := make([]byte, dir.Length)
	if err := readAt(v.r, v.size, buf, dir.Offset()); err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", where, err)
	}
	return buf, nil
}

// scanDir calls visit for each record of dir other than "." and "..", in on-disc order, until
// visit returns false. Records after the one that stops the scan are not parsed, so a lookup
// succeeds or fails exactly where coreos-installer's does.
func (v *Volume) scanDir(dir Record, where string, visit func(rawRecord) bool) error {
	buf, err := v.readExtent(dir, where)
	if err != nil {
		return err
	}
	err = eachRecord(buf, func(at int, b []byte) (bool, error) {
		rec, err := parseRecord(b, false)
		if err != nil {
			return false, fmt.Errorf("directory record at byte %d of directory %s (ISO byte %d): %w", at, where, dir.Offset()+int64(at), err)
		}
		return rec.skip || visit(rec), nil
	})
	var incomplete *incompleteRecordError
	if errors.As(err, &incomplete) {
		return fmt.Errorf("incomplete directory record at byte %d of directory %s (ISO byte %d): %d bytes claimed, %d left; corrupt ISO?",
			incomplete.at, where, dir.Offset()+int64(incomplete.at), incomplete.claimed, incomplete.left)
	}
	return err
}

// ReadDir returns the records of a directory (without "." and ".."), in on-disc order, with
// their Rock Ridge names.
func (v *Volume) ReadDir(dir Record) ([]Record, error) {
	return v.readDir(dir, dir.Name)
}

func (v *Volume) readDir(dir Record, where string) ([]Record, error) {
	var raws []rawRecord
	if err := v.scanDir(dir, where, func(r rawRecord) bool {
		raws = append(raws, r)
		return true
	}); err != nil {
		return nil, err
	}
	records := make([]Record, len(raws))
	budget := continuationBytesPerDirByte*int64(dir.Length) + maxContinuations*SectorSize
	for i, r := range raws {
		name, err := v.rockRidgeName(r.systemUse, &budget)
		if err != nil {
			return nil, fmt.Errorf("reading the Rock Ridge name of %s in directory %s: %w", r.Name, where, err)
		}
		r.RockRidgeName = name
		records[i] = r.Record
	}
	return records, nil
}

// Lookup finds the record at an uppercase primary path ("COREOS/IGNINFO.JSO",
// "/IMAGES/PXEBOOT", "" or "/" for the root). Components are compared exactly with the
// normalised primary names; Rock Ridge names are never matched. Not found returns a
// *NotFoundError.
func (v *Volume) Lookup(path string) (Record, error) {
	components := pathComponents(path)
	cur := v.Root
	for i, c := range components {
		dirPath := "/"
		if i > 0 {
			dirPath = strings.Join(components[:i], "/")
		}
		last := i == len(components)-1
		var found *rawRecord
		err := v.scanDir(cur, dirPath, func(r rawRecord) bool {
			if r.Name == c {
				found = &r
				return false
			}
			return true
		})
		if err != nil {
			return Record{}, fmt.Errorf("looking up %s: %w", path, err)
		}
		switch {
		case found == nil:
			return Record{}, &NotFoundError{Path: path, Component: c, Dir: dirPath, Intermediate: !last}
		case !last && !found.Dir:
			return Record{}, &NotFoundError{Path: path, Component: c, Dir: dirPath, Intermediate: true, NotDir: true}
		case last:
			budget := int64(maxContinuations * SectorSize)
			name, err := v.rockRidgeName(found.systemUse, &budget)
			if err != nil {
				return Record{}, fmt.Errorf("looking up %s: Rock Ridge name: %w", path, err)
			}
			found.RockRidgeName = name
		}
		cur = found.Record
	}
	return cur, nil
}

// pathComponents splits a path into components, dropping empty and "." components and
// resolving ".." (never above the root).
func pathComponents(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// WalkEntry is one file or directory found by Walk.
type WalkEntry struct {
	Path        string // primary path without leading slash, e.g. "IMAGES/PXEBOOT/ROOTFS.IMG"
	DisplayPath string // the same path with Rock Ridge names where present, e.g. "images/pxeboot/rootfs.img"
	Record
}

// Walk visits every record depth-first, each directory before its contents, in on-disc order.
// An error from fn stops the walk and is returned as is. Directory loops, nesting deeper than
// 64 levels, and directories that together hold more bytes than the file are errors.
func (v *Volume) Walk(fn func(WalkEntry) error) error {
	w := walker{v: v, fn: fn, visited: map[uint32]bool{v.Root.LBA: true}}
	return w.walk(v.Root, "", "", 0)
}

type walker struct {
	v         *Volume
	fn        func(WalkEntry) error
	visited   map[uint32]bool // directory LBAs, to catch loops
	bytesRead int64           // directory bytes; extents of a sound ISO do not overlap
}

func (w *walker) walk(dir Record, path, display string, depth int) error {
	where := path
	if where == "" {
		where = "/"
	}
	if depth >= maxWalkDepth {
		return fmt.Errorf("directory %s is nested more than %d levels deep; corrupt ISO?", where, maxWalkDepth)
	}
	records, err := w.v.readDir(dir, where)
	if err != nil {
		return err
	}
	w.bytesRead += int64(dir.Length)
	if w.bytesRead > w.v.size {
		return fmt.Errorf("directories up to %s hold more bytes than the %d-byte ISO; overlapping directory extents, corrupt ISO?",
			where, w.v.size)
	}
	for _, rec := range records {
		e := WalkEntry{Path: joinPath(path, rec.Name), DisplayPath: joinPath(display, rec.displayName()), Record: rec}
		if err := w.fn(e); err != nil {
			return err
		}
		if !rec.Dir {
			continue
		}
		// An empty extent holds no records, so it cannot loop, and some writers share LBAs
		// between empty extents.
		if rec.Length > 0 {
			if w.visited[rec.LBA] {
				return fmt.Errorf("directory %s (LBA %d) was already visited: directory loop, corrupt ISO?", e.Path, rec.LBA)
			}
			w.visited[rec.LBA] = true
		}
		if err := w.walk(rec, e.Path, e.DisplayPath, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Rock Ridge NM flags.
const (
	nmContinue = 0x01
	nmCurrent  = 0x02
	nmParent   = 0x04
)

// rockRidgeName returns the Rock Ridge (RRIP NM) name in a record's system use area, following
// SUSP continuation areas (CE) while budget (bytes) lasts. It assumes the SUSP skip length is
// 0, as every writer in use sets it. Malformed entries leave the name empty: Rock Ridge is only
// for display, and the primary name stays authoritative. Only a failing read is an error.
func (v *Volume) rockRidgeName(area []byte, budget *int64) (string, error) {
	var name []byte
	complete := false
	for hops := 0; ; hops++ {
		ce, ok := scanSUSP(area, &name, &complete)
		if !ok {
			return "", nil
		}
		if complete || ce == nil || hops == maxContinuations {
			break
		}
		if !ce.inSector() || int64(ce.length) > *budget {
			return "", nil
		}
		*budget -= int64(ce.length)
		start := ce.at()
		if start+int64(ce.length) > v.size {
			return "", nil
		}
		area = make([]byte, ce.length)
		if err := readAt(v.r, v.size, area, start); err != nil {
			return "", fmt.Errorf("reading continuation area: %w", err)
		}
	}
	return checkedRockRidgeName(name), nil
}

// scanSUSP appends the NM name parts of one system use area to name and reports the last CE
// entry seen. ok is false when the area holds an entry that makes no sense.
func scanSUSP(area []byte, name *[]byte, complete *bool) (ce *continuation, ok bool) {
	ok = true
	wellFormed := eachSUSPEntry(area, func(sig string, entry []byte) bool {
		switch sig {
		case "NM":
			if len(entry) < 5 || entry[4]&(nmCurrent|nmParent) != 0 {
				ok = false
				return false
			}
			*name = append(*name, entry[5:]...)
			if entry[4]&nmContinue == 0 {
				*complete = true
				ce = nil
				return false
			}
		case "CE":
			c, isCE := parseCE(entry)
			if !isCE {
				ok = false
				return false
			}
			ce = &c
		}
		return true
	})
	if !wellFormed || !ok {
		return nil, false
	}
	return ce, true
}

// checkedRockRidgeName drops names that cannot be one path component, so that a DisplayPath
// never gains components or control characters from a hostile image.
func checkedRockRidgeName(name []byte) string {
	s := string(name)
	if s == "" || s == "." || s == ".." {
		return ""
	}
	for _, c := range name {
		if c == '/' || c < 0x20 || c == 0x7f {
			return ""
		}
	}
	return s
}
