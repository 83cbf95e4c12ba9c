package isobuilder

import (
	"encoding/binary"
	"fmt"

	"github.com/sno-iso/sno-iso/embed"
)

// reservedArea is a structure of the ISO that lies inside its files' extents, or past them,
// yet must never be written as an embed area.
type reservedArea struct {
	name string
	embed.Area
	// kargsOnly marks a boot loader's configuration: the kargs areas lie in it, no other.
	kargsOnly bool
}

// maxPathTable bounds a path table: a real one is a few KiB, one entry per directory.
const maxPathTable = 1 << 20

// reservedAreas lists the structures that the area rule protects besides the system area,
// the volume descriptors and the primary directories: the path tables, the Joliet root
// directory, the El Torito boot catalog, the backup GPT at the end of a hybrid image, and
// the files protected as extents finds them (the ISO's metadata files, its boot files).
// Values that point nowhere sensible are skipped: they protect nothing, and reading the ISO
// is not their check.
func (l *LiveISO) reservedAreas(protected []reservedArea) ([]reservedArea, error) {
	var reserved []reservedArea
	keep := func(r reservedArea) {
		if r.Length > 0 && r.Offset >= 0 && r.Offset < l.size {
			r.Length = min(r.Length, l.size-r.Offset)
			reserved = append(reserved, r)
		}
	}
	add := func(name string, offset, length int64) {
		keep(reservedArea{name: name, Area: embed.Area{Offset: offset, Length: length}})
	}
	for _, d := range l.volume.Descriptors {
		if d.PathTableSize <= maxPathTable {
			for _, lba := range d.PathTables {
				add(fmt.Sprintf("the path table at sector %d", lba), int64(lba)*SectorSize, int64(d.PathTableSize))
			}
		}
		if d.TypeCode == descriptorSupplementary {
			add("the Joliet root directory", d.Root.Offset(), int64(d.Root.Length))
		}
		if d.BootCatalogLBA != 0 {
			add("the El Torito boot catalog", int64(d.BootCatalogLBA)*SectorSize, SectorSize)
		}
	}
	backup, err := l.backupGPT()
	if err != nil {
		return nil, err
	}
	reserved = append(reserved, backup...)
	for _, f := range protected {
		keep(f)
	}
	return reserved, nil
}

// backupGPT is the backup GPT header and partition entries that the primary GPT header (in
// the system area) points to, when there is one.
func (l *LiveISO) backupGPT() ([]reservedArea, error) {
	const lbaSize = 512
	header := make([]byte, lbaSize)
	if l.size < 2*lbaSize {
		return nil, nil
	}
	if err := readAt(l.base, l.size, header, lbaSize); err != nil {
		return nil, err
	}
	if string(header[:8]) != "EFI PART" {
		return nil, nil
	}
	alternate := binary.LittleEndian.Uint64(header[32:40])
	if alternate == 0 || alternate >= uint64(l.size/lbaSize) {
		return nil, nil
	}
	// Only a header that is there and says it is the backup: a stale address in a system
	// area copied from another image protects nothing and must not refuse a good ISO.
	if err := readAt(l.base, l.size, header, int64(alternate)*lbaSize); err != nil {
		return nil, err
	}
	if string(header[:8]) != "EFI PART" || binary.LittleEndian.Uint64(header[24:32]) != alternate {
		return nil, nil
	}
	areas := []reservedArea{{name: "the backup GPT header", Area: embed.Area{Offset: int64(alternate) * lbaSize, Length: lbaSize}}}
	entries := binary.LittleEndian.Uint64(header[72:80])
	count, size := int64(binary.LittleEndian.Uint32(header[80:84])), int64(binary.LittleEndian.Uint32(header[84:88]))
	if entries < uint64(l.size/lbaSize) && count <= 1024 && size <= 4096 {
		areas = append(areas, reservedArea{name: "the backup GPT partition entries",
			Area: embed.Area{Offset: int64(entries) * lbaSize, Length: count * size}})
	}
	return areas, nil
}
