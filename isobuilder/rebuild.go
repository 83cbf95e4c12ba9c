package isobuilder

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/diskfs/go-diskfs/backend"
	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
	"github.com/diskfs/go-diskfs/partition/mbr"
	"github.com/sno-iso/sno-iso/embed"
)

// RebuildOptions says how a rebuilt ISO differs from its source.
type RebuildOptions struct {
	// Minimal drops images/pxeboot/rootfs.img and coreos/miniso.dat and edits the kernel
	// arguments as a minimal ISO needs (see MinimalOptions).
	Minimal bool
	MinimalOptions
	// IgnitionAreaSize, when larger than the Ignition area, grows images/ignition.img to
	// this many bytes and rewrites coreos/igninfo.json to name all of it.
	IgnitionAreaSize int64
}

// maxConfigFile bounds the bootloader configs read into memory for editing.
const maxConfigFile = 1 << 20

// Rebuild writes a new ISO9660 image (Rock Ridge and Joliet names, the source's volume id)
// into a temporary file in dir, with the changes opts asks for. Unlike the patch-based edits,
// files move: the El Torito boot catalog is regenerated for the new places of its BIOS and
// UEFI images (the boot info table included), and the source's hybrid MBR and GPT, and the
// legacy coreiso+ and coreKarg headers, are recreated for the new layout, so the result boots
// as a CD and from a USB stick like the source. The directory structure is laid out by
// go-diskfs; file data is copied from the source ISO in large blocks by the kernel where it
// can, so memory does not depend on the ISO's size. The result is deterministic.
func (l *LiveISO) Rebuild(ctx context.Context, dir string, opts RebuildOptions) (*DerivedISO, error) {
	if opts.RootfsURL != "" {
		if !opts.Minimal {
			return nil, errors.New("a rootfs URL only makes sense for a minimal ISO")
		}
		if err := CheckRootfsURL(opts.RootfsURL); err != nil {
			return nil, err
		}
	}
	plan, err := l.planRebuild(opts)
	if err != nil {
		return nil, err
	}
	tmp, err := createTemp(dir)
	if err != nil {
		return nil, fmt.Errorf("creating the rebuilt ISO: %w", err)
	}
	tmpName := tmp.Name()
	if err := plan.write(ctx, dir, tmp); err != nil {
		tmp.Close()
		os.Remove(tmpName)
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return nil, fmt.Errorf("writing the rebuilt ISO: %w", err)
	}
	var edit func(*LiveISO) ([]Patch, error)
	if opts.Minimal && l.Kargs != nil {
		edit = func(d *LiveISO) ([]Patch, error) { return rebuiltMinimalKargs(l, d, opts.RootfsURL) }
	}
	return openDerived(tmpName, "rebuilt ISO", edit)
}

// rebuiltMinimalKargs edits the kernel arguments of a rebuilt minimal ISO, starting from the
// source's current ones, so that a customized source keeps its edits.
func rebuiltMinimalKargs(src, d *LiveISO, rootfsURL string) ([]Patch, error) {
	current, err := src.CurrentKargs()
	if err != nil {
		return nil, err
	}
	newDefault, _, err := minimalKargs(src.Kargs.Default, "")
	if err != nil {
		return nil, err
	}
	var deletes, appends []string
	for _, k := range strings.Fields(current) {
		if strings.HasPrefix(k, liveISOKarg) {
			deletes = append(deletes, k)
		}
	}
	if rootfsURL != "" {
		appends = append(appends, rootfsURLArg(rootfsURL))
	}
	newCurrent, err := embed.ModifyKargs(current, appends, deletes, nil)
	if err != nil {
		return nil, err
	}
	patches, err := d.KargsPatches(newCurrent)
	if err != nil {
		return nil, err
	}
	if d.Kargs.Source != "coreKarg header" {
		return patches, nil // kargs.json was rewritten with the files
	}
	defaults, err := defaultKargsPatch(d, newDefault)
	if err != nil {
		return nil, err
	}
	return append(patches, defaults), nil
}

// rebuildFile is one file of the rebuilt ISO and where its bytes come from.
type rebuildFile struct {
	display string // Rock Ridge path, as created in the workspace
	primary string // primary path in the source, "" for new files
	srcLBA  uint32
	srcLen  int64 // bytes copied from the source extent
	origLen int64 // bytes of the source extent, whatever replaces them
	length  int64 // bytes in the new file (the rest is zeros)
	data    []byte
	// bootTable marks an El Torito image with a boot info table; go-diskfs writes it, with
	// the table for its new place, from the workspace copy.
	bootTable bool
}

// rebuildPlan is everything decided before the first byte is written.
type rebuildPlan struct {
	src     *LiveISO
	opts    RebuildOptions
	dirs    []string
	files   []*rebuildFile
	catalog string // Rock Ridge path of the boot catalog, "" when the source has none
	boot    []bootEntry
}

func (l *LiveISO) planRebuild(opts RebuildOptions) (*rebuildPlan, error) {
	p := &rebuildPlan{src: l, opts: opts}
	catLBA, entries, err := readBootCatalog(l)
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	if opts.Minimal {
		drop[rootfsPath], drop[minisoPath] = true, true
	}
	grow := opts.IgnitionAreaSize > l.Ignition.Length
	if grow && (l.Ignition.Offset != l.fileOffset(l.Ignition.File) || l.Ignition.Length != l.fileLength(l.Ignition.File)) {
		return nil, fmt.Errorf("the Ignition area is a part of %s, not a whole file; it cannot be grown", l.Ignition.File)
	}
	byLBA := map[uint32]*rebuildFile{}
	err = l.Volume.Walk(func(e WalkEntry) error {
		if e.Dir {
			p.dirs = append(p.dirs, e.DisplayPath)
			return nil
		}
		if drop[e.Path] {
			return nil
		}
		if catLBA != 0 && e.LBA == catLBA {
			p.catalog = e.DisplayPath
			return nil
		}
		f := &rebuildFile{display: e.DisplayPath, primary: e.Path, srcLBA: e.LBA, srcLen: int64(e.Length), origLen: int64(e.Length), length: int64(e.Length)}
		p.files = append(p.files, f)
		if _, seen := byLBA[e.LBA]; !seen && e.Length > 0 {
			byLBA[e.LBA] = f
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		f := byLBA[e.lba]
		if f == nil {
			return nil, fmt.Errorf("El Torito boot image at LBA %d is not a file of the ISO; cannot rebuild its boot catalog", e.lba)
		}
		e.file = f.display
		if e.platform == 0 && e.bootTable(l, f) {
			f.bootTable = true
		}
		p.boot = append(p.boot, e)
	}
	ignitionImage := l.Ignition.File
	for _, f := range p.files {
		if f.primary == l.Ignition.File {
			ignitionImage = f.display
		}
	}
	for _, f := range p.files {
		switch {
		case grow && f.primary == l.Ignition.File:
			f.length = opts.IgnitionAreaSize
		case grow && f.primary == "COREOS/IGNINFO.JSO":
			f.data = []byte(fmt.Sprintf("{\n  \"file\": %q\n}\n", ignitionImage))
			f.srcLen, f.length = 0, int64(len(f.data))
		case opts.Minimal && f.primary == kargsJSONPath && l.Kargs != nil:
			if err := l.minimalKargsJSON(f); err != nil {
				return nil, err
			}
		case opts.Minimal && isBootloaderConfig(f.display):
			if err := l.editBootloaderConfig(f, opts.RootfsURL); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// minimalKargsJSON rewrites coreos/kargs.json with the minimal ISO's defaults. Files move
// in a rebuild, so the new form may be longer than the old file.
func (l *LiveISO) minimalKargsJSON(f *rebuildFile) error {
	if f.srcLen > maxConfigFile {
		return fmt.Errorf("%s is %d bytes; corrupt ISO?", kargsJSONPath, f.srcLen)
	}
	raw := make([]byte, f.srcLen)
	if err := readAt(l, l.size, raw, int64(f.srcLBA)*SectorSize); err != nil {
		return fmt.Errorf("reading %s: %w", kargsJSONPath, err)
	}
	newDefault, _, err := minimalKargs(l.Kargs.Default, "")
	if err != nil {
		return err
	}
	data, err := formatKargsJSON(raw, newDefault)
	if err != nil {
		return err
	}
	if len(data) < len(raw) {
		data = append(data, bytes.Repeat([]byte{' '}, len(raw)-len(data))...)
	}
	f.data, f.srcLen, f.length = data, 0, int64(len(data))
	return nil
}

func (l *LiveISO) fileOffset(p string) int64 {
	off, _, _ := l.Locate(p)
	return off
}

func (l *LiveISO) fileLength(p string) int64 {
	_, n, _ := l.Locate(p)
	return n
}

var bootloaderConfig = regexp.MustCompile(`(?i)(^|/)(grub\.cfg|isolinux\.cfg|syslinux\.cfg)$`)

func isBootloaderConfig(display string) bool { return bootloaderConfig.MatchString(display) }

var liveISOToken = regexp.MustCompile(`(^|[ \t])coreos\.liveiso=[^ \t\r\n]*`)

// editBootloaderConfig takes coreos.liveiso= out of a bootloader config for a minimal ISO.
// Inside kargs areas the area edits do that; elsewhere the argument is blanked with spaces,
// so the file keeps its length and the areas their offsets. An ISO without kargs areas gets
// the rootfs URL in place of the argument instead.
func (l *LiveISO) editBootloaderConfig(f *rebuildFile, rootfsURL string) error {
	if f.srcLen > maxConfigFile {
		return nil
	}
	data := make([]byte, f.srcLen)
	start := int64(f.srcLBA) * SectorSize
	if err := readAt(l, l.size, data, start); err != nil {
		return fmt.Errorf("reading %s: %w", f.display, err)
	}
	if l.Kargs == nil {
		repl := ""
		if rootfsURL != "" {
			repl = rootfsURLArg(rootfsURL)
		}
		f.data = liveISOToken.ReplaceAllFunc(data, func(m []byte) []byte {
			lead := m[:len(m)-len(strings.TrimLeft(string(m), " \t"))]
			if repl == "" {
				return lead
			}
			return append(append([]byte{}, lead...), repl...)
		})
		f.srcLen, f.length = 0, int64(len(f.data))
		return nil
	}
	inArea := func(i int) bool {
		for _, a := range l.Kargs.Areas {
			if off := start + int64(i); off >= a.Offset && off < a.End() {
				return true
			}
		}
		return false
	}
	for _, m := range liveISOToken.FindAllIndex(data, -1) {
		if inArea(m[0]) || inArea(m[1]-1) {
			continue
		}
		for i := m[0]; i < m[1]; i++ {
			data[i] = ' '
		}
	}
	f.data, f.srcLen = data, 0
	return nil
}

// bootEntry is one El Torito boot image.
type bootEntry struct {
	platform    byte
	emulation   byte
	loadSegment uint16
	systemType  byte
	sectors     uint16
	lba         uint32
	file        string
}

// bootTable reports whether the image carries an El Torito boot info table: the primary
// descriptor's LBA, its own LBA and length at bytes 8 to 20.
func (e bootEntry) bootTable(l *LiveISO, f *rebuildFile) bool {
	if f.srcLen < 64 {
		return false
	}
	var b [12]byte
	if err := readAt(l, l.size, b[:], int64(f.srcLBA)*SectorSize+8); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(b[0:]) == descriptorLBA &&
		binary.LittleEndian.Uint32(b[4:]) == f.srcLBA &&
		int64(binary.LittleEndian.Uint32(b[8:])) == f.srcLen
}

// readBootCatalog finds the El Torito boot record and returns the catalog's LBA and its boot
// images. An ISO without one returns 0.
func readBootCatalog(l *LiveISO) (uint32, []bootEntry, error) {
	sector := make([]byte, SectorSize)
	for i := range maxDescriptors {
		off := int64(descriptorLBA+i) * SectorSize
		if err := readAt(l, l.size, sector, off); err != nil {
			return 0, nil, err
		}
		if sector[0] == descriptorTerminator {
			return 0, nil, nil
		}
		if sector[0] == descriptorBoot && strings.HasPrefix(string(sector[7:39]), "EL TORITO SPECIFICATION") {
			break
		}
	}
	if sector[0] != descriptorBoot {
		return 0, nil, nil
	}
	catLBA := binary.LittleEndian.Uint32(sector[71:75])
	if err := readAt(l, l.size, sector, int64(catLBA)*SectorSize); err != nil {
		return 0, nil, fmt.Errorf("El Torito boot catalog at LBA %d: %w", catLBA, err)
	}
	entries, err := parseBootCatalog(sector)
	if err != nil {
		return 0, nil, fmt.Errorf("El Torito boot catalog at LBA %d: %w", catLBA, err)
	}
	return catLBA, entries, nil
}

// parseBootCatalog reads the boot images of a catalog's first sector: the default entry,
// then each section's entries.
func parseBootCatalog(sector []byte) ([]bootEntry, error) {
	if len(sector) != SectorSize || sector[0] != 1 || sector[30] != 0x55 || sector[31] != 0xaa {
		return nil, errors.New("no validation entry; corrupt ISO?")
	}
	entry := func(b []byte, platform byte) bootEntry {
		return bootEntry{platform: platform, emulation: b[1] & 0x0f, loadSegment: binary.LittleEndian.Uint16(b[2:4]),
			systemType: b[4], sectors: binary.LittleEndian.Uint16(b[6:8]), lba: binary.LittleEndian.Uint32(b[8:12])}
	}
	var entries []bootEntry
	if sector[32] == 0x88 {
		entries = append(entries, entry(sector[32:64], sector[1]))
	}
	for pos := 64; pos+32 <= SectorSize; {
		h := sector[pos : pos+32]
		if h[0] != 0x90 && h[0] != 0x91 {
			break
		}
		n := int(binary.LittleEndian.Uint16(h[2:4]))
		pos += 32
		for range n {
			if pos+32 > SectorSize {
				break
			}
			if sector[pos] == 0x88 {
				entries = append(entries, entry(sector[pos:pos+32], h[1]))
			}
			pos += 32
		}
		if h[0] == 0x91 {
			break
		}
	}
	return entries, nil
}

// write lays the image out with go-diskfs, then fills in file data, normalises what go-diskfs
// would make vary between runs, and writes the system area.
func (p *rebuildPlan) write(ctx context.Context, dir string, out *os.File) error {
	workspace, err := os.MkdirTemp(dir, ".sno-iso-rebuild-")
	if err != nil {
		return fmt.Errorf("creating the rebuild workspace: %w", err)
	}
	defer os.RemoveAll(workspace)
	if err := p.fillWorkspace(workspace); err != nil {
		return err
	}
	if err := p.finalize(workspace, out); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	newVol, err := ReadVolume(out, fileSize(out))
	if err != nil {
		return fmt.Errorf("go-diskfs wrote an ISO that does not read back: %w", err)
	}
	moved, err := p.copyData(ctx, out, newVol)
	if err != nil {
		return err
	}
	if err := normalizeVolume(p.src, out, newVol); err != nil {
		return err
	}
	return writeSystemArea(p.src, out, newVol, moved)
}

func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// fillWorkspace creates the tree go-diskfs lays out: every file at its final length but
// sparse (its data is copied afterwards), except boot images that get a boot info table,
// whose bytes go-diskfs reads to compute the table's checksum.
func (p *rebuildPlan) fillWorkspace(workspace string) error {
	for _, d := range p.dirs {
		if err := os.MkdirAll(filepath.Join(workspace, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("rebuild workspace: %w", err)
		}
	}
	for _, f := range p.files {
		name := filepath.Join(workspace, filepath.FromSlash(f.display))
		w, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("rebuild workspace: %w", err)
		}
		if f.bootTable {
			err = newSequentialWriter(context.Background(), w, p.src.file, nil, true).copyBase(int64(f.srcLBA)*SectorSize, f.srcLen)
		}
		if err == nil {
			err = w.Truncate(f.length)
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("rebuild workspace: %s: %w", f.display, err)
		}
	}
	return nil
}

func (p *rebuildPlan) finalize(workspace string, out *os.File) error {
	fsys, err := iso9660.Create(sparseBackend{file.New(out, false)}, 0, 0, SectorSize, workspace)
	if err != nil {
		return fmt.Errorf("go-diskfs: %w", err)
	}
	opts := iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: p.src.Volume.VolumeID}
	if len(p.boot) > 0 {
		// A catalog the source hid from the directory tree stays hidden.
		et := &iso9660.ElTorito{BootCatalog: p.catalog, HideBootCatalog: p.catalog == ""}
		if et.HideBootCatalog {
			et.BootCatalog = "boot.catalog"
		}
		for _, b := range p.boot {
			e := &iso9660.ElToritoEntry{
				Platform: iso9660.Platform(b.platform), Emulation: iso9660.Emulation(b.emulation),
				BootFile: b.file, LoadSegment: b.loadSegment, SystemType: mbr.Type(b.systemType),
			}
			for _, f := range p.files {
				if f.display == b.file {
					e.BootTable = f.bootTable
				}
			}
			e.SetLoadSize(b.sectors)
			et.Entries = append(et.Entries, e)
		}
		opts.ElTorito = et
	}
	if err := fsys.Finalize(opts); err != nil {
		return fmt.Errorf("go-diskfs: writing the ISO9660 image: %w", err)
	}
	if err := bootRecordFirst(out); err != nil {
		return err
	}
	// Skipped zeros at the end leave the file short of the volume.
	var space [4]byte
	if _, err := out.ReadAt(space[:], descriptorLBA*SectorSize+80); err != nil {
		return fmt.Errorf("reading back the rebuilt primary volume descriptor: %w", err)
	}
	return out.Truncate(int64(binary.LittleEndian.Uint32(space[:])) * SectorSize)
}

// bootRecordFirst moves the El Torito boot record to sector 17, where the El Torito
// specification puts it and where BIOS firmware (SeaBIOS among others) reads it; go-diskfs
// writes the Joliet descriptor there.
func bootRecordFirst(out *os.File) error {
	descs, err := rawDescriptors(out, fileSize(out))
	if err != nil {
		return fmt.Errorf("reading back the rebuilt volume descriptors: %w", err)
	}
	for i, d := range descs {
		if i == 0 || d.data[0] != descriptorBoot {
			continue
		}
		reordered := append([]rawDescriptor{descs[0], d}, descs[1:i]...)
		reordered = append(reordered, descs[i+1:]...)
		for j, r := range reordered {
			if _, err := out.WriteAt(r.data, int64(descriptorLBA+j)*SectorSize); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// copyData copies each file's bytes into its new extent and returns where every source
// extent went, for the system area.
func (p *rebuildPlan) copyData(ctx context.Context, out *os.File, newVol *Volume) ([]movedExtent, error) {
	newFiles := map[string]Record{}
	err := newVol.Walk(func(e WalkEntry) error {
		if !e.Dir {
			newFiles[e.DisplayPath] = e.Record
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading back the rebuilt ISO: %w", err)
	}
	var moved []movedExtent
	for _, f := range p.files {
		rec, ok := newFiles[f.display]
		if !ok || int64(rec.Length) != f.length {
			return nil, fmt.Errorf("go-diskfs did not write %s as expected (found %v, %d bytes)", f.display, ok, rec.Length)
		}
		dst := rec.Offset()
		if f.origLen > 0 {
			moved = append(moved, movedExtent{old: int64(f.srcLBA) * SectorSize, length: f.origLen, new: dst, newLength: f.length})
		}
		switch {
		case f.bootTable:
		case f.data != nil:
			if _, err := out.WriteAt(f.data, dst); err != nil {
				return nil, fmt.Errorf("writing %s: %w", f.display, err)
			}
		case f.srcLen > 0:
			if _, err := out.Seek(dst, 0); err != nil {
				return nil, err
			}
			if err := newSequentialWriter(ctx, out, p.src.file, nil, true).copyBase(int64(f.srcLBA)*SectorSize, f.srcLen); err != nil {
				return nil, fmt.Errorf("copying %s: %w", f.display, err)
			}
		}
	}
	return moved, nil
}

// sparseBackend hands go-diskfs a file that skips writes of zeros: the output is a new,
// sparse file, so they change nothing, and the file data go-diskfs copies from the sparse
// workspace is all zeros until copyData fills it in.
type sparseBackend struct{ backend.Storage }

func (s sparseBackend) Writable() (backend.WritableFile, error) {
	w, err := s.Storage.Writable()
	if err != nil {
		return nil, err
	}
	return sparseWriter{w}, nil
}

type sparseWriter struct{ backend.WritableFile }

func (s sparseWriter) WriteAt(p []byte, off int64) (int, error) {
	if embed.IsZero(p) {
		return len(p), nil
	}
	return s.WritableFile.WriteAt(p, off)
}

// movedExtent is where a source file's bytes went.
type movedExtent struct {
	old, length    int64
	new, newLength int64
}

// remap returns where the source byte off is in the rebuilt ISO.
func remap(moved []movedExtent, off int64) (int64, bool) {
	for _, m := range moved {
		if off >= m.old && off < m.old+m.length {
			return m.new + off - m.old, true
		}
	}
	return 0, false
}

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
	var created []byte
	for _, d := range srcDescs {
		if d.data[0] == descriptorPrimary {
			created = d.data[813:830]
			break
		}
	}
	stamp := shortDate(created)
	for _, nd := range newDescs {
		t := nd.data[0]
		if t != descriptorPrimary && t != descriptorSupplementary {
			continue
		}
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
		if err := normalizeTree(out, fileSize(out), binary.LittleEndian.Uint32(root[2:6]), binary.LittleEndian.Uint32(root[10:14]), stamp, created); err != nil {
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

// normalizeTree walks the directory tree from the root extent, rewriting every record's date,
// Rock Ridge TF stamps and PX owner.
func normalizeTree(out *os.File, size int64, rootLBA, rootLen uint32, stamp, longStamp []byte) error {
	type extent struct{ lba, length uint32 }
	queue := []extent{{rootLBA, rootLen}}
	seen := map[uint32]bool{rootLBA: true}
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
		for i := 0; i < len(buf); {
			n := int(buf[i])
			if n == 0 {
				i = (i/SectorSize + 1) * SectorSize
				continue
			}
			if n < minRecordLen || i+n > len(buf) {
				return fmt.Errorf("rebuilt directory at LBA %d: bad record at byte %d", dir.lba, i)
			}
			rec := buf[i : i+n]
			copy(rec[18:25], stamp)
			nameLen := int(rec[32])
			if su := minRecordLen + nameLen + (nameLen+1)%2; su < n {
				if err := normalizeSUSP(out, size, rec[su:], stamp, longStamp, 0); err != nil {
					return err
				}
			}
			name := rec[minRecordLen : minRecordLen+nameLen]
			isDotEntry := nameLen == 1 && (name[0] == 0 || name[0] == 1)
			if rec[25]&2 != 0 && !isDotEntry {
				lba := binary.LittleEndian.Uint32(rec[2:6])
				if !seen[lba] {
					seen[lba] = true
					queue = append(queue, extent{lba, binary.LittleEndian.Uint32(rec[10:14])})
				}
			}
			i += n
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
	for len(area) >= 4 {
		n := int(area[2])
		if n < 4 || n > len(area) {
			return nil
		}
		e := area[:n]
		switch string(e[:2]) {
		case "TF":
			width := 7
			if e[4]&0x80 != 0 {
				width = 17
			}
			for pos := 5; pos+width <= n; pos += width {
				if width == 7 {
					copy(e[pos:], stamp)
				} else {
					copy(e[pos:], longStamp)
				}
			}
		case "PX":
			if n >= 36 {
				clear(e[20:36]) // uid and gid, both byte orders
			}
		case "CE":
			if n >= 28 && depth < maxContinuations {
				block := binary.LittleEndian.Uint32(e[4:8])
				off := binary.LittleEndian.Uint32(e[12:16])
				length := binary.LittleEndian.Uint32(e[20:24])
				if off < SectorSize && length <= SectorSize-off {
					ce := make([]byte, length)
					at := int64(block)*SectorSize + int64(off)
					if err := readAt(out, size, ce, at); err != nil {
						return err
					}
					if err := normalizeSUSP(out, size, ce, stamp, longStamp, depth+1); err != nil {
						return err
					}
					if _, err := out.WriteAt(ce, at); err != nil {
						return err
					}
				}
			}
		case "ST":
			return nil
		}
		area = area[n:]
	}
	return nil
}

// System area layout (the hybrid boot records of xorriso and isohybrid).
const (
	mbrPartitionTable = 446
	mbrBootFilePtr    = 432 // isohybrid: the boot image's address in 512-byte sectors
	gptHeaderOffset   = 512
	legacyKargsHeader = embed.SystemAreaSize - 24 - 72
	legacyIgnHeader   = embed.SystemAreaSize - 24
	cylinderBytes     = 64 * 32 * 512 // the geometry xorriso aligns hybrid images to
)

// writeSystemArea writes the source's system area into the rebuilt image with every address
// moved to the new layout: the MBR partitions, the isohybrid boot image pointer, the GPT
// (primary and backup) and the legacy coreiso+ and coreKarg headers. It also pads the image
// as the source was padded.
func writeSystemArea(src *LiveISO, out *os.File, newVol *Volume, moved []movedExtent) error {
	sys := make([]byte, embed.SystemAreaSize)
	if err := readAt(src, src.size, sys, 0); err != nil {
		return err
	}
	hasMBR := sys[510] == 0x55 && sys[511] == 0xaa
	hasGPT := string(sys[gptHeaderOffset:gptHeaderOffset+8]) == "EFI PART"
	newVolBytes := int64(newVol.SpaceSize) * SectorSize
	newSize := newVolBytes
	var g *gpt
	if hasGPT {
		var err error
		if g, err = parseGPT(sys); err != nil {
			return err
		}
		newSize += int64(g.entrySectors()+1) * 512
	}
	if hasMBR || hasGPT {
		align := int64(SectorSize)
		if src.size%cylinderBytes == 0 {
			align = cylinderBytes
		}
		newSize = (newSize + align - 1) / align * align
	}
	if err := out.Truncate(newSize); err != nil {
		return err
	}
	if int64(src.Volume.SpaceSize)*SectorSize == src.size {
		// The source's volume takes in the padding and backup GPT, as xorriso makes it.
		if err := setVolumeSpace(out, uint32(newSize/SectorSize)); err != nil {
			return err
		}
		newVolBytes = newSize
	}
	r := &relayout{moved: moved,
		oldFile: src.size / 512, newFile: newSize / 512,
		oldVol: int64(src.Volume.SpaceSize) * 4, newVol: newVolBytes / 512}
	if g != nil {
		r.oldBackup, r.oldLastUsable = int64(g.backupLBA()), int64(g.lastUsable())
		r.newBackup = r.newFile - 1
		r.newLastUsable = r.newBackup - int64(g.entrySectors()) - 1
	}
	if hasMBR {
		if err := r.mbr(sys); err != nil {
			return err
		}
	}
	if err := r.legacyHeaders(src, sys); err != nil {
		return err
	}
	if g != nil {
		if err := r.gpt(g, sys, out); err != nil {
			return err
		}
	}
	_, err := out.WriteAt(sys, 0)
	return err
}

// setVolumeSpace sets the volume space size of the primary and supplementary descriptors.
func setVolumeSpace(out *os.File, sectors uint32) error {
	descs, err := rawDescriptors(out, fileSize(out))
	if err != nil {
		return err
	}
	for _, d := range descs {
		if d.data[0] != descriptorPrimary && d.data[0] != descriptorSupplementary {
			continue
		}
		var b [8]byte
		binary.LittleEndian.PutUint32(b[0:], sectors)
		binary.BigEndian.PutUint32(b[4:], sectors)
		if _, err := out.WriteAt(b[:], d.offset+80); err != nil {
			return err
		}
	}
	return nil
}

// relayout maps the source's addresses (in 512-byte sectors) to the rebuilt image's.
type relayout struct {
	moved                        []movedExtent
	oldFile, newFile             int64
	oldVol, newVol               int64
	oldBackup, newBackup         int64
	oldLastUsable, newLastUsable int64
}

// span moves a partition of sectors sectors at start: one that starts a file follows the
// file, one that starts at 0 ends where its end anchor (the image, the volume, the GPT's
// usable space) ends now.
func (r *relayout) span(start, sectors int64, what string) (int64, int64, error) {
	if sectors == 0 {
		return start, sectors, nil
	}
	if start == 0 {
		end := start + sectors
		anchors := [][2]int64{{r.oldFile, r.newFile}, {r.oldVol, r.newVol}}
		if r.oldBackup != 0 {
			anchors = append(anchors, [2]int64{r.oldLastUsable + 1, r.newLastUsable + 1}, [2]int64{r.oldLastUsable, r.newLastUsable},
				[2]int64{r.oldBackup, r.newBackup})
		}
		for _, a := range anchors {
			if end == a[0] {
				return 0, a[1], nil
			}
		}
		return 0, 0, fmt.Errorf("%s spans sectors 0 to %d, which ends neither at the image, the volume nor the GPT's usable space; cannot recreate it", what, end)
	}
	if start*512 < embed.SystemAreaSize {
		return start, sectors, nil
	}
	for _, m := range r.moved {
		if start*512 == m.old {
			grown := (m.newLength - m.length + 511) / 512
			return m.new / 512, sectors + max(grown, 0), nil
		}
	}
	return 0, 0, fmt.Errorf("%s starts at sector %d, which is not the start of a file the rebuilt ISO keeps; cannot recreate it", what, start)
}

func (r *relayout) mbr(sys []byte) error {
	if ptr := int64(binary.LittleEndian.Uint32(sys[mbrBootFilePtr:])); ptr != 0 {
		if n, ok := remap(r.moved, ptr*512); ok && n%512 == 0 {
			binary.LittleEndian.PutUint32(sys[mbrBootFilePtr:], uint32(n/512))
		}
	}
	for i := range 4 {
		e := sys[mbrPartitionTable+16*i : mbrPartitionTable+16*i+16]
		start, sectors := int64(binary.LittleEndian.Uint32(e[8:])), int64(binary.LittleEndian.Uint32(e[12:]))
		if e[4] == 0 && start == 0 && sectors == 0 {
			continue
		}
		ns, nn, err := r.span(start, sectors, fmt.Sprintf("MBR partition %d", i+1))
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(e[8:], uint32(ns))
		binary.LittleEndian.PutUint32(e[12:], uint32(nn))
		copy(e[1:4], chs(ns))
		copy(e[5:8], chs(ns+nn-1))
	}
	return nil
}

// chs encodes a sector address in the 64-head, 32-sector geometry, saturating as MBRs do.
func chs(lba int64) []byte {
	const heads, secs = 64, 32
	c, h, s := lba/(heads*secs), (lba/secs)%heads, lba%secs+1
	if c > 1023 {
		c, h, s = 1023, heads-1, secs
	}
	return []byte{byte(h), byte(s) | byte(c>>8)<<6, byte(c)}
}

// legacyHeaders moves the offsets in the coreiso+ and coreKarg headers.
func (r *relayout) legacyHeaders(src *LiveISO, sys []byte) error {
	if string(sys[legacyIgnHeader:legacyIgnHeader+8]) == "coreiso+" {
		off := int64(binary.LittleEndian.Uint64(sys[legacyIgnHeader+8:]))
		length := int64(binary.LittleEndian.Uint64(sys[legacyIgnHeader+16:]))
		if n, ok := remap(r.moved, off); ok {
			binary.LittleEndian.PutUint64(sys[legacyIgnHeader+8:], uint64(n))
			for _, m := range r.moved {
				if m.old == off && m.length == length {
					binary.LittleEndian.PutUint64(sys[legacyIgnHeader+16:], uint64(m.newLength))
				}
			}
		}
	}
	if string(sys[legacyKargsHeader:legacyKargsHeader+8]) != "coreKarg" {
		return nil
	}
	for i := 2; i < 9; i++ {
		field := sys[legacyKargsHeader+8*i:]
		off := int64(binary.LittleEndian.Uint64(field))
		if off == 0 {
			if i > 2 {
				break
			}
			continue
		}
		n, ok := remap(r.moved, off)
		if !ok {
			return fmt.Errorf("the coreKarg header points at byte %d, outside every file the rebuilt ISO keeps", off)
		}
		binary.LittleEndian.PutUint64(field, uint64(n))
	}
	return nil
}

// legacyDefaultKargsOffset returns where the coreKarg header keeps the default kargs copy.
func legacyDefaultKargsOffset(iso *LiveISO) (int64, error) {
	var b [8]byte
	if err := readAt(iso, iso.size, b[:], legacyKargsHeader+16); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), nil
}

// gpt is the primary GPT header and entries of a system area.
type gpt struct {
	header  []byte
	entries []byte
}

func parseGPT(sys []byte) (*gpt, error) {
	h := sys[gptHeaderOffset : gptHeaderOffset+512]
	size := binary.LittleEndian.Uint32(h[12:])
	entriesLBA := binary.LittleEndian.Uint64(h[72:])
	count, entrySize := binary.LittleEndian.Uint32(h[80:]), binary.LittleEndian.Uint32(h[84:])
	if size < 92 || size > 512 || entrySize < 128 || entrySize > 1024 || count > 1024 {
		return nil, fmt.Errorf("GPT header at byte %d has sizes no GPT has (header %d, %d entries of %d bytes); corrupt ISO?", gptHeaderOffset, size, count, entrySize)
	}
	start, end := entriesLBA*512, entriesLBA*512+uint64(count)*uint64(entrySize)
	if start < 1024 || end > embed.SystemAreaSize {
		return nil, fmt.Errorf("the GPT partition entries (bytes %d to %d) are not inside the system area; cannot recreate them", start, end)
	}
	return &gpt{header: h[:size], entries: sys[start:end]}, nil
}

func (g *gpt) count() int         { return int(binary.LittleEndian.Uint32(g.header[80:])) }
func (g *gpt) entrySize() int     { return int(binary.LittleEndian.Uint32(g.header[84:])) }
func (g *gpt) entrySectors() int  { return (len(g.entries) + 511) / 512 }
func (g *gpt) backupLBA() uint64  { return binary.LittleEndian.Uint64(g.header[32:]) }
func (g *gpt) lastUsable() uint64 { return binary.LittleEndian.Uint64(g.header[48:]) }

// gpt moves the partitions in the primary GPT (inside sys) and writes the backup GPT at the
// end of the image.
func (r *relayout) gpt(g *gpt, sys []byte, out *os.File) error {
	for i := range g.count() {
		e := g.entries[i*g.entrySize() : (i+1)*g.entrySize()]
		first, last := int64(binary.LittleEndian.Uint64(e[32:])), int64(binary.LittleEndian.Uint64(e[40:]))
		if embed.IsZero(e[:16]) {
			continue
		}
		ns, nn, err := r.span(first, last-first+1, fmt.Sprintf("GPT partition %d", i+1))
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(e[32:], uint64(ns))
		binary.LittleEndian.PutUint64(e[40:], uint64(ns+nn-1))
	}
	entriesCRC := crc32.ChecksumIEEE(g.entries)
	h := g.header
	binary.LittleEndian.PutUint64(h[32:], uint64(r.newBackup))
	binary.LittleEndian.PutUint64(h[48:], uint64(r.newLastUsable))
	binary.LittleEndian.PutUint32(h[88:], entriesCRC)
	setGPTHeaderCRC(h)

	backup := append([]byte(nil), h...)
	backupEntries := r.newBackup - int64(g.entrySectors())
	binary.LittleEndian.PutUint64(backup[24:], uint64(r.newBackup))
	binary.LittleEndian.PutUint64(backup[32:], 1)
	binary.LittleEndian.PutUint64(backup[72:], uint64(backupEntries))
	setGPTHeaderCRC(backup)
	if _, err := out.WriteAt(g.entries, backupEntries*512); err != nil {
		return err
	}
	_, err := out.WriteAt(backup, r.newBackup*512)
	return err
}

func setGPTHeaderCRC(h []byte) {
	clear(h[16:20])
	binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h))
}
