package isobuilder

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/embed"
)

// maxIgnitionArea bounds the Ignition area: the stock one is 256 KiB and a grown one holds at
// most a few MiB of payload; an area naming a whole rootfs would be read into memory.
const maxIgnitionArea = maxPayloadSize

// AreaError says that an embed area the ISO's metadata names is not a place sno-iso may write:
// editing there would overwrite the ISO's own structures or another area.
type AreaError struct {
	Area           string // e.g. "the Ignition area (coreos/igninfo.json)"
	Offset, Length int64
	Problem        string
}

func (e *AreaError) Error() string {
	return fmt.Sprintf("%s (%d bytes at byte %d) %s; the ISO is corrupt or was crafted, use a pristine CoreOS live ISO",
		e.Area, e.Length, e.Offset, e.Problem)
}

// namedArea is an area with the words that name it in errors.
type namedArea struct {
	name string
	embed.Area
	writable bool
	kargs    bool // a kargs area, which lies in a boot loader's configuration
}

// validateAreas checks every area found in the ISO's metadata against one rule (areaRule),
// so that no command writes outside the areas.
func (l *LiveISO) validateAreas() error {
	files, dirs, protected, err := l.extents()
	if err != nil {
		return err
	}
	areas := l.namedAreas()
	if l.ignition.Length > maxIgnitionArea {
		return &AreaError{Area: areas[0].name, Offset: l.ignition.Offset, Length: l.ignition.Length,
			Problem: fmt.Sprintf("is larger than the %d bytes an Ignition area can need", int64(maxIgnitionArea))}
	}
	reserved, err := l.reservedAreas(protected)
	if err != nil {
		return fmt.Errorf("reading the ISO's structures to check its embed areas: %w", err)
	}
	rule := areaRule{files: files, dirs: dirs, reserved: reserved, size: l.size,
		descriptorsEnd: int64(descriptorLBA+len(l.volume.Descriptors)+1) * SectorSize}
	for i, a := range areas {
		if problem := rule.problem(a, areas[:i]); problem != "" {
			return &AreaError{Area: a.name, Offset: a.Offset, Length: a.Length, Problem: problem}
		}
	}
	return nil
}

// areaRule is what an area must respect: it lies inside a regular file's extent that lies
// inside the image, clear of the system area, the volume descriptors, every directory extent
// and the other structures of reservedAreas, and a writable area does not overlap another.
type areaRule struct {
	files, dirs          []Record
	reserved             []reservedArea
	size, descriptorsEnd int64
}

// problem says how a breaks the rule, given the areas checked before it; "" when it does not.
func (r areaRule) problem(a namedArea, earlier []namedArea) string {
	switch {
	case a.Length <= 0:
		return "is empty"
	case a.Offset < r.descriptorsEnd:
		return fmt.Sprintf("lies in the system area or the volume descriptors (the first %d bytes)", r.descriptorsEnd)
	case !insideAny(a.Area, r.files, r.size):
		return "does not lie inside one regular file of the ISO"
	}
	if dir, ok := overlapping(a.Area, r.dirs); ok {
		return fmt.Sprintf("overlaps the directory records at byte %d", dir.Offset())
	}
	for _, s := range r.reserved {
		if overlaps(a.Area, s.Area) && !(s.kargsOnly && a.kargs) {
			return fmt.Sprintf("overlaps %s (%d bytes at byte %d)", s.name, s.Length, s.Offset)
		}
	}
	for _, b := range earlier {
		if a.writable && b.writable && overlaps(a.Area, b.Area) {
			return fmt.Sprintf("overlaps %s (%d bytes at byte %d)", b.name, b.Length, b.Offset)
		}
	}
	return ""
}

// namedAreas lists the Ignition area first, then the kargs areas, then the area of the legacy
// coreiso+ header, which nothing writes and which names the Ignition area itself.
func (l *LiveISO) namedAreas() []namedArea {
	areas := []namedArea{{name: "the Ignition area (" + l.ignition.Source + ")", Area: l.ignition.Area, writable: true}}
	if l.kargs != nil {
		for i, a := range l.kargs.Areas {
			areas = append(areas, namedArea{name: fmt.Sprintf("karg area %d (%s)", i+1, l.kargs.Source), Area: a.Area, writable: true, kargs: true})
		}
	}
	if legacy := l.ignition.Legacy; legacy != nil {
		areas = append(areas, namedArea{name: "the area of the coreiso+ header", Area: *legacy})
	}
	return areas
}

// extents walks the volume once and returns its regular files, its non-empty directories and
// the files no area may lie in: the metadata files (embed.MetadataPaths) and bootFiles.
func (l *LiveISO) extents() (files, dirs []Record, protected []reservedArea, err error) {
	err = l.volume.Walk(func(e WalkEntry) error {
		switch {
		case e.Dir && e.Length > 0:
			dirs = append(dirs, e.Record)
		case !e.Dir:
			files = append(files, e.Record)
			area := embed.Area{Offset: e.Offset(), Length: int64(e.Length)}
			if slices.Contains(embed.MetadataPaths, e.Path) {
				protected = append(protected, reservedArea{name: "the metadata file " + e.displayName(), Area: area})
			} else if isBootFile(e) {
				protected = append(protected, reservedArea{name: "the boot file " + e.DisplayPath, Area: area})
			} else if isBootConfig(e) {
				protected = append(protected, reservedArea{name: "the boot loader configuration " + e.DisplayPath, Area: area, kargsOnly: true})
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing the ISO's files to check its embed areas: %w", err)
	}
	return files, append(dirs, l.volume.Root), protected, nil
}

// bootFiles are the files that booting a CoreOS live ISO reads, as their Rock Ridge paths:
// the kernel, the initramfs, the root filesystem, the EFI boot image and isolinux. An area in
// one would let an edit break the boot. s390x's images/cdboot.img is not one of them: its
// Ignition area lies inside it.
var bootFiles = []string{"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img", "images/pxeboot/rootfs.img",
	"images/efiboot.img", "isolinux/isolinux.bin"}

// isBootConfig reports whether e is a boot loader's configuration, which the boot reads and
// where the kargs areas lie: isolinux's, s390x's zipl.prm, or a grub.cfg under EFI/.
func isBootConfig(e WalkEntry) bool {
	for _, p := range []string{e.DisplayPath, strings.TrimSuffix(strings.ToLower(e.Path), ".")} {
		p = strings.ToLower(p)
		if p == "isolinux/isolinux.cfg" || p == "zipl.prm" || (strings.HasPrefix(p, "efi/") && strings.HasSuffix(p, "/grub.cfg")) {
			return true
		}
	}
	return false
}

// isBootFile reports whether e is one of bootFiles, by its Rock Ridge path or, in an ISO
// without Rock Ridge, by its primary name ("IMAGES/PXEBOOT/VMLINUZ.").
func isBootFile(e WalkEntry) bool {
	return slices.Contains(bootFiles, e.DisplayPath) || slices.Contains(bootFiles, strings.TrimSuffix(strings.ToLower(e.Path), "."))
}

// insideAny reports whether a lies inside the extent of one of files that itself lies inside
// an image of size bytes. Extents are at most 4 GiB past a 32-bit LBA, so nothing overflows.
func insideAny(a embed.Area, files []Record, size int64) bool {
	for _, f := range files {
		start, end := f.Offset(), f.Offset()+int64(f.Length)
		if end <= size && a.Offset >= start && a.Length <= end-a.Offset {
			return true
		}
	}
	return false
}

// overlapping returns the first of records whose extent shares a byte with a.
func overlapping(a embed.Area, records []Record) (Record, bool) {
	for _, r := range records {
		if overlaps(a, embed.Area{Offset: r.Offset(), Length: int64(r.Length)}) {
			return r, true
		}
	}
	return Record{}, false
}

// overlaps reports whether two non-empty spans share a byte; lengths are compared with what is
// left, never added, so that no sum can wrap.
func overlaps(a, b embed.Area) bool {
	if a.Offset > b.Offset {
		a, b = b, a
	}
	return b.Length > 0 && a.Length > b.Offset-a.Offset
}
