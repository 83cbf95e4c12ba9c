package isobuilder

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
	tmp, err := createDerived(dir, "rebuilt ISO")
	if err != nil {
		return nil, err
	}
	if err := plan.write(ctx, tmp.dir, tmp.f); err != nil {
		tmp.discard()
		tmp.dir.close()
		return nil, err
	}
	var edit func(*LiveISO) ([]Patch, error)
	if opts.Minimal && l.kargs != nil {
		edit = func(d *LiveISO) ([]Patch, error) { return rebuiltMinimalKargs(l, d, opts.RootfsURL) }
	}
	return openDerived(tmp, "rebuilt ISO", edit)
}

// rebuiltMinimalKargs edits the kernel arguments of a rebuilt minimal ISO, starting from the
// source's current ones, so that a customized source keeps its edits.
func rebuiltMinimalKargs(src, d *LiveISO, rootfsURL string) ([]Patch, error) {
	current, err := src.CurrentKargs()
	if err != nil {
		return nil, err
	}
	newDefault, _, err := minimalKargs(src.kargs.Default, "")
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
		appends = append(appends, RootfsURLArg(rootfsURL))
	}
	newCurrent, err := embed.ModifyKargs(current, appends, deletes, nil)
	if err != nil {
		return nil, err
	}
	patches, err := d.KargsPatches(newCurrent)
	if err != nil {
		return nil, err
	}
	if d.kargs.Source != "coreKarg header" {
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
		drop[rootfsPath], drop[embed.MinisoPath] = true, true
	}
	grow := opts.IgnitionAreaSize > l.ignition.Length
	if grow && (l.ignition.Offset != l.fileOffset(l.ignition.File) || l.ignition.Length != l.fileLength(l.ignition.File)) {
		return nil, fmt.Errorf("the Ignition area is a part of %s, not a whole file; it cannot be grown", l.ignition.File)
	}
	byLBA := map[uint32]*rebuildFile{}
	err = l.volume.Walk(func(e WalkEntry) error {
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
		f := &rebuildFile{display: e.DisplayPath, primary: e.Path, srcLBA: e.LBA,
			srcLen: int64(e.Length), origLen: int64(e.Length), length: int64(e.Length)}
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
	ignitionImage := l.ignition.File
	for _, f := range p.files {
		if f.primary == l.ignition.File {
			ignitionImage = f.display
		}
	}
	for _, f := range p.files {
		switch {
		case grow && f.primary == l.ignition.File:
			f.length = opts.IgnitionAreaSize
		case grow && f.primary == "COREOS/IGNINFO.JSO":
			f.data = []byte(fmt.Sprintf("{\n  \"file\": %q\n}\n", ignitionImage))
			f.srcLen, f.length = 0, int64(len(f.data))
		case opts.Minimal && f.primary == kargsJSONPath && l.kargs != nil:
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
	newDefault, _, err := minimalKargs(l.kargs.Default, "")
	if err != nil {
		return err
	}
	data, err := embed.FormatKargsJSON(raw, newDefault)
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
	if l.kargs == nil {
		repl := ""
		if rootfsURL != "" {
			repl = RootfsURLArg(rootfsURL)
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
		for _, a := range l.kargs.Areas {
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

// write lays the image out with go-diskfs, then fills in file data, normalises what go-diskfs
// would make vary between runs, and writes the system area.
func (p *rebuildPlan) write(ctx context.Context, dir *outDir, out *os.File) error {
	ws, err := createTempDir(dir)
	if err != nil {
		return fmt.Errorf("creating the rebuild workspace: %w", err)
	}
	defer ws.remove()
	workspace := ws.workPath()
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
			err = newSequentialWriter(context.Background(), w, p.src.base, nil, true).copyBase(int64(f.srcLBA)*SectorSize, f.srcLen)
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
	opts := iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: p.src.volume.VolumeID}
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
			if err := newSequentialWriter(ctx, out, p.src.base, nil, true).copyBase(int64(f.srcLBA)*SectorSize, f.srcLen); err != nil {
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
