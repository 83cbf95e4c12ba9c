package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// MinisoMagic opens every COREOS/MINISO.DAT file.
const MinisoMagic = "MINISO\x00\x00"

// minisoVersion is the only data layout defined after the frozen header.
const minisoVersion = 1

// minisoSizeLimit caps how much of a miniso.dat is decoded, as coreos-installer does.
const minisoSizeLimit = 1 << 20

// minisoSectorSize is the ISO9660 sector size that table LBAs are counted in.
const minisoSectorSize = 2048

// MinisoEntry maps one file extent of the minimal ISO to the same file in the full ISO.
type MinisoEntry struct {
	Minimal uint32 // LBA of the file in the minimal ISO
	Full    uint32 // LBA of the file in the full ISO
	Length  uint32 // file length in bytes
}

// Miniso is the content of COREOS/MINISO.DAT: what it takes to rebuild the minimal ISO from
// the full ISO that carries it.
type Miniso struct {
	AppVersion string        // version of the tool that packed it, for information only
	Entries    []MinisoEntry // sorted by Minimal, non-overlapping, never empty
	Digest     [32]byte      // SHA-256 of the whole minimal ISO
	// XZPacked is an xz stream (CRC64 check, as the CoreOS build writes) of the minimal ISO with
	// the bytes of every entry's extent left out.
	XZPacked []byte
}

// DecodeMiniso parses a miniso.dat (bincode 1.x with little-endian varints). Bytes after the
// encoding, such as the zeros padding the file in the ISO, are ignored.
func DecodeMiniso(b []byte) (*Miniso, error) {
	if len(b) > minisoSizeLimit {
		b = b[:minisoSizeLimit]
	}
	d := minisoDecoder{b: b}
	if len(b) < len(MinisoMagic) || string(b[:len(MinisoMagic)]) != MinisoMagic {
		return nil, errors.New("miniso.dat: not a miniso file (bad magic)")
	}
	d.off = len(MinisoMagic)
	version, err := d.varint("version", math.MaxUint32)
	if err != nil {
		return nil, err
	}
	appVersion, err := d.string("app_version")
	if err != nil {
		return nil, err
	}
	if version != minisoVersion {
		return nil, fmt.Errorf("miniso.dat: incompatible miniso file version: %d vs %d (created by %s)",
			minisoVersion, version, appVersion)
	}
	m := &Miniso{AppVersion: appVersion}
	count, err := d.varint("entry count", math.MaxUint64)
	if err != nil {
		return nil, err
	}
	// Each entry takes at least three bytes, so a count beyond that cannot be genuine.
	if count > uint64(d.remaining()/3) {
		return nil, fmt.Errorf("miniso.dat: entry count %d at offset %d exceeds the %d bytes left",
			count, d.off, d.remaining())
	}
	m.Entries = make([]MinisoEntry, count)
	for i := range m.Entries {
		var fields [3]uint32
		for j, name := range [...]string{"minimal", "full", "length"} {
			v, err := d.varint(fmt.Sprintf("entry %d %s", i, name), math.MaxUint32)
			if err != nil {
				return nil, err
			}
			fields[j] = uint32(v)
		}
		m.Entries[i] = MinisoEntry{Minimal: fields[0], Full: fields[1], Length: fields[2]}
	}
	digest, err := d.bytes("digest", len(m.Digest))
	if err != nil {
		return nil, err
	}
	copy(m.Digest[:], digest)
	xzLen, err := d.varint("xzpacked length", math.MaxUint64)
	if err != nil {
		return nil, err
	}
	if xzLen > uint64(d.remaining()) {
		return nil, d.truncated("xzpacked")
	}
	xzPacked, err := d.bytes("xzpacked", int(xzLen))
	if err != nil {
		return nil, err
	}
	m.XZPacked = append([]byte{}, xzPacked...)
	if err := validateMinisoEntries(m.Entries); err != nil {
		return nil, fmt.Errorf("miniso.dat: %w", err)
	}
	return m, nil
}

// Encode serializes m as a version 1 miniso.dat, refusing what DecodeMiniso would reject.
func (m *Miniso) Encode() ([]byte, error) {
	if !utf8.ValidString(m.AppVersion) {
		return nil, fmt.Errorf("miniso: app version %q is not valid UTF-8", m.AppVersion)
	}
	if err := validateMinisoEntries(m.Entries); err != nil {
		return nil, fmt.Errorf("miniso: %w", err)
	}
	b := []byte(MinisoMagic)
	b = appendVarint(b, minisoVersion)
	b = appendVarint(b, uint64(len(m.AppVersion)))
	b = append(b, m.AppVersion...)
	b = appendVarint(b, uint64(len(m.Entries)))
	for _, e := range m.Entries {
		b = appendVarint(b, uint64(e.Minimal))
		b = appendVarint(b, uint64(e.Full))
		b = appendVarint(b, uint64(e.Length))
	}
	b = append(b, m.Digest[:]...)
	b = appendVarint(b, uint64(len(m.XZPacked)))
	b = append(b, m.XZPacked...)
	if len(b) > minisoSizeLimit {
		return nil, fmt.Errorf("miniso: encoding is %d bytes, more than the %d-byte limit readers accept",
			len(b), minisoSizeLimit)
	}
	return b, nil
}

// validateMinisoEntries checks that the table is non-empty and that each file ends before the
// next one starts in the minimal ISO, which unpacking relies on.
func validateMinisoEntries(entries []MinisoEntry) error {
	if len(entries) == 0 {
		return errors.New("file table is empty")
	}
	for i := 1; i < len(entries); i++ {
		prev, next := entries[i-1], entries[i]
		prevStart := uint64(prev.Minimal) * minisoSectorSize
		nextStart := uint64(next.Minimal) * minisoSectorSize
		if prevStart+uint64(prev.Length) > nextStart {
			return fmt.Errorf("files at offsets %d and %d overlap (table entries %d and %d)",
				prevStart, nextStart, i-1, i)
		}
	}
	return nil
}

// Varint markers of bincode 1.x: smaller values are stored in the marker byte itself.
const (
	varintU16  = 251
	varintU32  = 252
	varintU64  = 253
	varintU128 = 254
)

func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < varintU16:
		return append(b, byte(v))
	case v <= math.MaxUint16:
		return binary.LittleEndian.AppendUint16(append(b, varintU16), uint16(v))
	case v <= math.MaxUint32:
		return binary.LittleEndian.AppendUint32(append(b, varintU32), uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(append(b, varintU64), v)
	}
}

type minisoDecoder struct {
	b   []byte
	off int
}

func (d *minisoDecoder) remaining() int { return len(d.b) - d.off }

func (d *minisoDecoder) truncated(what string) error {
	if len(d.b) == minisoSizeLimit {
		return fmt.Errorf("miniso.dat: %s at offset %d runs past the %d-byte data size limit",
			what, d.off, minisoSizeLimit)
	}
	return fmt.Errorf("miniso.dat: truncated: %s at offset %d runs past the end (%d bytes)",
		what, d.off, len(d.b))
}

func (d *minisoDecoder) bytes(what string, n int) ([]byte, error) {
	if n > d.remaining() {
		return nil, d.truncated(what)
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b, nil
}

// varint reads a bincode varint. Like bincode, it accepts a wider marker than needed as long
// as the value fits in max.
func (d *minisoDecoder) varint(what string, max uint64) (uint64, error) {
	start := d.off
	marker, err := d.bytes(what, 1)
	if err != nil {
		return 0, err
	}
	var v uint64
	switch m := marker[0]; {
	case m < varintU16:
		v = uint64(m)
	case m == varintU16:
		b, err := d.bytes(what, 2)
		if err != nil {
			return 0, err
		}
		v = uint64(binary.LittleEndian.Uint16(b))
	case m == varintU32:
		b, err := d.bytes(what, 4)
		if err != nil {
			return 0, err
		}
		v = uint64(binary.LittleEndian.Uint32(b))
	case m == varintU64:
		b, err := d.bytes(what, 8)
		if err != nil {
			return 0, err
		}
		v = binary.LittleEndian.Uint64(b)
	case m == varintU128:
		return 0, fmt.Errorf("miniso.dat: %s at offset %d is a 128-bit integer", what, start)
	default:
		return 0, fmt.Errorf("miniso.dat: %s at offset %d has invalid varint marker %d", what, start, m)
	}
	if v > max {
		return 0, fmt.Errorf("miniso.dat: %s at offset %d is %d, more than %d", what, start, v, max)
	}
	return v, nil
}

func (d *minisoDecoder) string(what string) (string, error) {
	n, err := d.varint(what+" length", math.MaxUint64)
	if err != nil {
		return "", err
	}
	start := d.off
	if n > uint64(d.remaining()) {
		return "", d.truncated(what)
	}
	b, err := d.bytes(what, int(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("miniso.dat: %s at offset %d is not valid UTF-8", what, start)
	}
	return string(b), nil
}
