package isobuilder

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
)

// countingWriter counts what it is given and keeps nothing.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// xzZeros returns an xz stream (CRC64, as miniso.dat holds) of n zero bytes.
func xzZeros(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := minisoXZConfig.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// setXZIndexSize rewrites the uncompressed size of the only block in the index of stream s,
// which must encode to as many bytes as the old one: an index that lies about the stream.
func setXZIndexSize(t testing.TB, s []byte, size uint64) []byte {
	t.Helper()
	s = bytes.Clone(s)
	footer := s[len(s)-12:]
	indexStart := len(s) - 12 - int(binary.LittleEndian.Uint32(footer[4:8])+1)*4
	pos := indexStart + 1
	_, n := binary.Uvarint(s[pos:]) // block count
	pos += n
	_, n = binary.Uvarint(s[pos:]) // unpadded size
	pos += n
	_, old := binary.Uvarint(s[pos:])
	if binary.PutUvarint(s[pos:], size) != old {
		t.Fatalf("size %d does not encode in the %d bytes of the old one", size, old)
	}
	return s
}

// TestUnpackMinimalOutputBound: a miniso.dat whose table or xz stream asks for more than the
// full ISO holds is refused before a byte is written, and a stream that holds more than its
// index declares stops at the declared size: the output never outgrows the full ISO.
func TestUnpackMinimalOutputBound(t *testing.T) {
	full := make([]byte, 64*SectorSize)
	for i := range full {
		full[i] = byte(i * 7)
	}
	fullSize := int64(len(full))
	// Many entries copying the same 60 KiB of the full ISO, side by side in the minimal ISO:
	// a small table that asks for far more than the full ISO.
	var repeated []embed.MinisoEntry
	for i := range 1000 {
		repeated = append(repeated, embed.MinisoEntry{Minimal: uint32(i * 30), Full: 2, Length: 30 * SectorSize})
	}
	small := xzZeros(t, 2*SectorSize)
	cases := []struct {
		name     string
		entries  []embed.MinisoEntry
		packed   []byte
		maxWrite int64
		want     string
	}{
		{"table repeats the full ISO", repeated, small, 0, "more than the"},
		{"stream larger than the full ISO", []embed.MinisoEntry{{Minimal: 1, Full: 2, Length: 100}}, xzZeros(t, 1<<20), 0, "more than the"},
		{"index understates the stream", []embed.MinisoEntry{{Minimal: 1, Full: 2, Length: 100}}, setXZIndexSize(t, xzZeros(t, 1<<20), 20000), 20100, "more than its index declares"},
		{"file ends past the declared size", []embed.MinisoEntry{{Minimal: 1<<32 - 1, Full: 2, Length: 100}}, small, 0, "past the"},
		{"extreme entry", []embed.MinisoEntry{{Minimal: 1<<32 - 1, Full: 1<<32 - 1, Length: 1<<32 - 1}}, small, 0, "past the end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &embed.Miniso{Entries: c.entries, XZPacked: c.packed, Digest: sha256.Sum256(nil)}
			var out countingWriter
			err := UnpackMinimal(bytes.NewReader(full), fullSize, m, &out)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
			if out.n > c.maxWrite {
				t.Errorf("wrote %d bytes before failing, want at most %d", out.n, c.maxWrite)
			}
		})
	}
}

// TestXZIndexSize: the size read from the index is what was compressed.
func TestXZIndexSize(t *testing.T) {
	for _, n := range []int{0, 1, 5000, 1 << 20} {
		got, err := initrd.CheckXZDictionaries(xzZeros(t, n), minisoDictLimit)
		if err != nil || got != uint64(n) {
			t.Errorf("%d zero bytes: index says %d, %v", n, got, err)
		}
	}
}

// FuzzMinisoOutputBound: whatever miniso.dat says, unpacking never writes more than the full
// ISO's size, and succeeds only with the recorded digest. The seeds (testdata/fuzz) include
// tables that repeat the full ISO, xz indexes that lie, and MaxUint32/MaxUint64 fields.
func FuzzMinisoOutputBound(f *testing.F) {
	full := make([]byte, 64*SectorSize)
	for i := range full {
		full[i] = byte(i * 7)
	}
	f.Fuzz(func(t *testing.T, dat []byte) {
		m, err := embed.DecodeMiniso(dat)
		if err != nil {
			return
		}
		var out bytes.Buffer
		err = UnpackMinimal(bytes.NewReader(full), int64(len(full)), m, &out)
		if out.Len() > len(full) {
			t.Fatalf("wrote %d bytes, more than the %d-byte full ISO", out.Len(), len(full))
		}
		if err == nil && sha256.Sum256(out.Bytes()) != m.Digest {
			t.Fatal("UnpackMinimal succeeded but the output does not have the recorded digest")
		}
	})
}
