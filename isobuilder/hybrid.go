package isobuilder

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/sno-iso/sno-iso/embed"
)

// The hybrid boot records of the system area (isohybrid MBR, GPT, the legacy CoreOS
// headers), moved to a rebuilt ISO's layout so that it still boots from a USB stick.

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
	if int64(src.volume.SpaceSize)*SectorSize == src.size {
		// The source's volume takes in the padding and backup GPT, as xorriso makes it.
		if err := setVolumeSpace(out, uint32(newSize/SectorSize)); err != nil {
			return err
		}
		newVolBytes = newSize
	}
	r := &relayout{moved: moved,
		oldFile: src.size / 512, newFile: newSize / 512,
		oldVol: int64(src.volume.SpaceSize) * 4, newVol: newVolBytes / 512}
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
		return 0, 0, fmt.Errorf("%s spans sectors 0 to %d, which ends neither at the image, the volume nor the GPT's usable space; "+
			"cannot recreate it", what, end)
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
		return nil, fmt.Errorf("GPT header at byte %d has sizes no GPT has (header %d, %d entries of %d bytes); "+
			"corrupt ISO?", gptHeaderOffset, size, count, entrySize)
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
