package isobuilder

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/ulikunitz/xz"
)

// embed.MinisoPath is where a full live ISO keeps the table that rebuilds its minimal ISO.

// minisoDictLimit bounds the LZMA2 dictionary a miniso xz stream may ask for. It is xz preset
// 9's, the largest the CoreOS build uses; the decoder allocates the whole dictionary up front,
// so a corrupt header must not be able to ask for gigabytes.
const minisoDictLimit = 64 << 20

// minisoXZConfig fixes the compression settings so that packing the same ISOs gives the same
// bytes. The CRC64 check is what the CoreOS build writes.
var minisoXZConfig = xz.WriterConfig{CheckSum: xz.CRC64, DictCap: 8 << 20}

// UnpackMinimal reconstructs the minimal ISO recorded in full's miniso.dat and writes it to w:
// the bytes between files come from m's xz stream, each file's bytes from the full ISO. Memory
// does not depend on the ISO size, and no more than the minimal ISO's declared size (its
// files plus what the xz index says the stream holds, at most fullSize) is ever written. The
// SHA-256 of what was written is checked against m's digest only at the end, so on error w
// holds a partial or wrong image and must be discarded.
func UnpackMinimal(full io.ReaderAt, fullSize int64, m *embed.Miniso, w io.Writer) error {
	packedSize, err := initrd.CheckXZDictionaries(m.XZPacked, minisoDictLimit)
	if err != nil {
		return fmt.Errorf("miniso.dat: %w", err)
	}
	packed, err := xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(m.XZPacked))
	if err != nil {
		return fmt.Errorf("miniso.dat: xz stream: %w", err)
	}
	size, err := checkMinisoTable(m.Entries, packedSize, fullSize)
	if err != nil {
		return fmt.Errorf("miniso.dat: %w", err)
	}
	digest := sha256.New()
	out := &recordingWriter{w: io.MultiWriter(w, digest)}
	fail := func(err error) error {
		if out.err != nil {
			return fmt.Errorf("writing minimal ISO: %w", out.err)
		}
		return err
	}
	var pos int64
	for i, e := range m.Entries {
		start, src, length := int64(e.Minimal)*SectorSize, int64(e.Full)*SectorSize, int64(e.Length)
		if n, err := io.CopyN(out, packed, start-pos); err != nil {
			return fail(packedStreamError(err, pos+n, fmt.Sprintf("before entry %d at offset %d", i, start)))
		}
		if _, err := io.CopyN(out, io.NewSectionReader(full, src, length), length); err != nil {
			return fail(fmt.Errorf("reading %d bytes of the full ISO at offset %d (miniso.dat entry %d): %w", length, src, i, err))
		}
		pos = start + length
	}
	if n, err := io.CopyN(out, packed, size-pos); err != nil {
		return fail(packedStreamError(err, pos+n, "after the last file"))
	}
	// Reading past the declared end lets the xz reader check its index and checksum.
	if n, err := packed.Read(make([]byte, 1)); n > 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("the stream holds more than its index declares")
		}
		return packedStreamError(err, size, "at the declared end of the minimal ISO")
	}
	if found := digest.Sum(nil); !bytes.Equal(found, m.Digest[:]) {
		return fmt.Errorf("wrong final digest: expected %x, found %x", m.Digest[:], found)
	}
	return nil
}

// checkMinisoTable checks, before anything is written, that every file starts after the
// previous one ends in the minimal ISO and lies inside the full ISO, and returns the minimal
// ISO's size: its files plus the packedSize bytes between them. A minimal ISO is the full one
// without its root file system, so a size beyond fullSize is corruption (or a bomb).
func checkMinisoTable(entries []embed.MinisoEntry, packedSize uint64, fullSize int64) (int64, error) {
	if packedSize > uint64(fullSize) {
		return 0, fmt.Errorf("the xz stream declares %d bytes, more than the %d-byte full ISO", packedSize, fullSize)
	}
	size := int64(packedSize)
	var end int64
	for i, e := range entries {
		start, src, length := int64(e.Minimal)*SectorSize, int64(e.Full)*SectorSize, int64(e.Length)
		if start < end {
			return 0, fmt.Errorf("entry %d starts at minimal ISO offset %d, inside the previous file, which ends at %d",
				i, start, end)
		}
		if src+length > fullSize {
			return 0, fmt.Errorf("entry %d: %d bytes at full ISO offset %d run past the end of the %d-byte full ISO",
				i, length, src, fullSize)
		}
		end = start + length
		// Both terms are at most fullSize here, so the sum cannot overflow.
		if size += length; size > fullSize {
			return 0, fmt.Errorf("the table and xz stream declare a minimal ISO of more than the %d-byte full ISO (at entry %d)", fullSize, i)
		}
	}
	if end > size {
		return 0, fmt.Errorf("the last file ends at minimal ISO offset %d, past the %d bytes the table and xz stream declare", end, size)
	}
	return size, nil
}

func packedStreamError(err error, offset int64, where string) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("miniso.dat: xz stream fails at minimal ISO offset %d, %s: %w", offset, where, err)
}

// recordingWriter remembers the destination's error, so that a failing output is reported as
// such rather than as corrupt input.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// PackMinimal computes the contents of full's COREOS/MINISO.DAT that rebuild minimal from full.
// Every file of the minimal ISO must exist at the same path in the full ISO with the same
// length; the table maps each minimal file extent to the full one, and the rest of the minimal
// ISO is kept xz-compressed. The result is checked by unpacking it against full before it is
// returned, and must fit in the full ISO's COREOS/MINISO.DAT. appVersion is recorded for
// information.
func PackMinimal(full io.ReaderAt, fullSize int64, minimal io.ReaderAt, minimalSize int64, appVersion string) ([]byte, error) {
	fullVol, err := ReadVolume(full, fullSize)
	if err != nil {
		return nil, fmt.Errorf("full ISO: %w", err)
	}
	minimalVol, err := ReadVolume(minimal, minimalSize)
	if err != nil {
		return nil, fmt.Errorf("minimal ISO: %w", err)
	}
	dat, err := fullVol.Lookup(embed.MinisoPath)
	if err != nil {
		return nil, fmt.Errorf("full ISO has no %s to hold the minimal ISO table: %w", embed.MinisoPath, err)
	}
	entries, err := minisoEntries(fullVol, minimalVol)
	if err != nil {
		return nil, err
	}
	m := &embed.Miniso{AppVersion: appVersion, Entries: entries}
	packed := &cappedBuffer{limit: int64(dat.Length)}
	digest, err := compressMinimal(minimal, minimalSize, entries, packed)
	if err != nil {
		return nil, err
	}
	if packed.total > packed.limit {
		return nil, fmt.Errorf("the compressed minimal ISO alone is %d bytes, more than the %d bytes of %s in the full ISO",
			packed.total, dat.Length, embed.MinisoPath)
	}
	m.Digest, m.XZPacked = digest, packed.Bytes()
	encoded, err := m.Encode()
	if err != nil {
		return nil, err
	}
	if int64(len(encoded)) > int64(dat.Length) {
		return nil, fmt.Errorf("miniso.dat is %d bytes, more than the %d bytes of %s in the full ISO",
			len(encoded), dat.Length, embed.MinisoPath)
	}
	if err := UnpackMinimal(full, fullSize, m, io.Discard); err != nil {
		return nil, fmt.Errorf("the packed minimal ISO does not unpack to the minimal ISO (do the files differ in content?): %w", err)
	}
	return encoded, nil
}

// minisoEntries pairs every non-empty minimal file with the file at the same path in full,
// sorted by minimal LBA, hard links (identical entries) counted once.
func minisoEntries(fullVol, minimalVol *Volume) ([]embed.MinisoEntry, error) {
	fullFiles := map[string]Record{}
	err := fullVol.Walk(func(e WalkEntry) error {
		if _, seen := fullFiles[e.Path]; !seen && !e.Dir {
			fullFiles[e.Path] = e.Record
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("full ISO: %w", err)
	}
	var entries []embed.MinisoEntry
	err = minimalVol.Walk(func(e WalkEntry) error {
		if e.Dir {
			return nil
		}
		f, ok := fullFiles[e.Path]
		if !ok {
			return fmt.Errorf("missing minimal file %s in full ISO", e.DisplayPath)
		}
		if f.Length != e.Length {
			return fmt.Errorf("file %s has different lengths in full and minimal ISOs (%d and %d bytes)",
				e.DisplayPath, f.Length, e.Length)
		}
		if e.Length > 0 {
			entries = append(entries, embed.MinisoEntry{Minimal: e.LBA, Full: f.LBA, Length: e.Length})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("minimal ISO: %w", err)
	}
	slices.SortFunc(entries, func(a, b embed.MinisoEntry) int {
		return cmp.Or(cmp.Compare(a.Minimal, b.Minimal), cmp.Compare(a.Full, b.Full), cmp.Compare(a.Length, b.Length))
	})
	return slices.Compact(entries), nil
}

// compressMinimal reads the minimal ISO once, writing to packed an xz stream of everything
// but the entries' extents, and returns the SHA-256 of the whole image.
func compressMinimal(minimal io.ReaderAt, minimalSize int64, entries []embed.MinisoEntry, packed io.Writer) ([32]byte, error) {
	var digest [32]byte
	xzw, err := minisoXZConfig.NewWriter(packed)
	if err != nil {
		return digest, fmt.Errorf("starting xz compression: %w", err)
	}
	hash := sha256.New()
	kept := io.MultiWriter(hash, xzw)
	in := io.NewSectionReader(minimal, 0, minimalSize)
	var pos int64
	for i, e := range entries {
		start := int64(e.Minimal) * SectorSize
		end := start + int64(e.Length)
		if start < pos {
			prev := int64(entries[i-1].Minimal) * SectorSize
			return digest, fmt.Errorf("minimal ISO: files at offsets %d and %d overlap", prev, start)
		}
		if end > minimalSize {
			return digest, fmt.Errorf("minimal ISO: file at offset %d, %d bytes long, runs past the end of the %d-byte image",
				start, e.Length, minimalSize)
		}
		if _, err := io.CopyN(kept, in, start-pos); err != nil {
			return digest, fmt.Errorf("compressing minimal ISO bytes %d to %d: %w", pos, start, err)
		}
		if _, err := io.CopyN(hash, in, int64(e.Length)); err != nil {
			return digest, fmt.Errorf("reading minimal ISO file at offset %d: %w", start, err)
		}
		pos = end
	}
	if _, err := io.CopyN(kept, in, minimalSize-pos); err != nil {
		return digest, fmt.Errorf("compressing minimal ISO bytes %d to %d: %w", pos, minimalSize, err)
	}
	if err := xzw.Close(); err != nil {
		return digest, fmt.Errorf("finishing xz compression: %w", err)
	}
	hash.Sum(digest[:0])
	return digest, nil
}

// cappedBuffer collects the xz stream up to limit bytes and only counts the rest, so that
// memory stays bounded by the size of miniso.dat while the error can still give the size.
type cappedBuffer struct {
	bytes.Buffer
	limit, total int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if b.total > b.limit {
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
