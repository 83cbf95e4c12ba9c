package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/isobuilder"
)

// identityHead is how much of the ISO's start its identity covers: the system area (hybrid
// MBR/GPT, legacy embed headers) and the volume descriptors (the volume's id and dates).
const identityHead = 64 << 10

// identitySample is how much of each network-boot file's start and end the identity covers.
const identitySample = 4 << 10

// identityMinisoMax bounds the coreos/miniso.dat read for the identity (its data is a few KiB).
const identityMinisoMax = 1 << 20

// isoIdentity names the ISO's contents for ETags from its bytes alone: the same for a local
// file, an HTTP origin or an object store serving them (so a download resumes with If-Range
// on any replica), and different for two builds. It covers the size; the first 64 KiB; the
// embed areas (what in-place edits change); coreos/miniso.dat, whose SHA-256 names the whole
// minimal ISO (every file but the rootfs); and the place, first and last 4 KiB of each
// network-boot file (the kernel's version, the rootfs's squashfs superblock and tables).
// Reading it costs a few small reads, once per version of the ISO.
func isoIdentity(iso *isobuilder.LiveISO) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "iso %d\n", iso.Size())
	ign := iso.IgnitionArea()
	spans := [][2]int64{{0, min(identityHead, iso.Size())}, {ign.Offset, ign.Length}}
	if kargs := iso.Kargs(); kargs != nil {
		for _, a := range kargs.Areas {
			spans = append(spans, [2]int64{a.Offset, int64(kargs.Size)})
		}
	}
	if off, n, ok := iso.MinisoExtent(); ok {
		spans = append(spans, [2]int64{off, min(n, identityMinisoMax)})
	}
	files, err := iso.PXEFiles()
	if err != nil {
		return "", err
	}
	for _, f := range files {
		off, n := f.Offset(), int64(f.Length)
		fmt.Fprintf(h, "%s %d %d\n", f.Name, off, n)
		sample := min(n, identitySample)
		spans = append(spans, [2]int64{off, sample}, [2]int64{off + n - sample, sample})
	}
	for _, s := range spans {
		buf := make([]byte, s[1])
		if _, err := iso.ReadAt(buf, s[0]); err != nil {
			return "", fmt.Errorf("reading bytes %d-%d for the ISO's identity: %w", s[0], s[0]+s[1]-1, err)
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// volumeTime is the primary volume's modification date (else its creation date): the
// Last-Modified of what is served from a local ISO, the same wherever the file is copied.
// The Unix epoch stands for an ISO that records neither.
func volumeTime(iso *isobuilder.LiveISO) time.Time {
	pvd := make([]byte, isobuilder.SectorSize)
	if _, err := iso.ReadAt(pvd, 16*isobuilder.SectorSize); err == nil {
		for _, off := range []int{830, 813} {
			if t, ok := parseVolumeDate(pvd[off : off+17]); ok {
				return t
			}
		}
	}
	return time.Unix(0, 0).UTC()
}

// parseVolumeDate decodes an ISO 9660 dec-datetime (ECMA-119 8.4.26.1): 16 ASCII digits
// YYYYMMDDHHMMSScc and a signed offset from UTC in 15-minute units. All zeros means unset.
func parseVolumeDate(b []byte) (time.Time, bool) {
	if len(b) != 17 {
		return time.Time{}, false
	}
	digits := string(b[:16])
	if strings.Trim(digits, "0123456789") != "" {
		return time.Time{}, false
	}
	var f [7]int
	for i, width := range []int{4, 2, 2, 2, 2, 2, 2} {
		f[i], _ = strconv.Atoi(digits[:width])
		digits = digits[width:]
	}
	offset := int(int8(b[16]))
	if f[0] == 0 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59 || offset < -48 || offset > 52 {
		return time.Time{}, false
	}
	zone := time.FixedZone("", offset*15*60)
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6]*10_000_000, zone)
	return t.UTC().Truncate(time.Second), true
}
