package isobuilder

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The El Torito boot catalog: which boot images a source ISO has, so the rebuild keeps them.

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
	var catLBA uint32
	for _, d := range l.volume.Descriptors {
		if d.BootCatalogLBA != 0 {
			catLBA = d.BootCatalogLBA
			break
		}
	}
	if catLBA == 0 {
		return 0, nil, nil
	}
	sector := make([]byte, SectorSize)
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
