package initrd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// newcEntry is a newc header as an independent parser in the tests sees it.
type newcEntry struct {
	name                                     string
	ino, mode, uid, gid, nlink, mtime, check int64
	data                                     []byte
}

// parseRawNewc parses one uncompressed newc archive byte by byte, independently of readNewc,
// to check what WriteNewc writes. It also checks the 4-byte alignment of names and data.
func parseRawNewc(t *testing.T, b []byte) []newcEntry {
	t.Helper()
	var entries []newcEntry
	pos := 0
	for {
		if pos+110 > len(b) {
			t.Fatalf("archive ends at %d inside a header", pos)
		}
		h := b[pos : pos+110]
		if string(h[:6]) != "070701" {
			t.Fatalf("entry at %d: magic %q", pos, h[:6])
		}
		field := func(i int) int64 {
			v, err := strconv.ParseInt(string(h[6+8*i:14+8*i]), 16, 64)
			if err != nil {
				t.Fatalf("entry at %d: field %d: %v", pos, i, err)
			}
			return v
		}
		e := newcEntry{ino: field(0), mode: field(1), uid: field(2), gid: field(3), nlink: field(4), mtime: field(5), check: field(12)}
		size, nameSize := int(field(6)), int(field(11))
		for i := 7; i <= 10; i++ {
			if field(i) != 0 {
				t.Errorf("entry at %d: device field %d is %d", pos, i, field(i))
			}
		}
		nameEnd := pos + 110 + nameSize
		e.name = string(bytes.TrimRight(b[pos+110:nameEnd], "\x00"))
		dataStart := (nameEnd + 3) &^ 3
		e.data = b[dataStart : dataStart+size]
		pos = (dataStart + size + 3) &^ 3
		if e.name == "TRAILER!!!" {
			if pos != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-pos)
			}
			return append(entries, e)
		}
		entries = append(entries, e)
	}
}

// filesOf builds a Files value from alternating path, content pairs.
func filesOf(pairs ...string) Files {
	f := Files{}
	for i := 0; i < len(pairs); i += 2 {
		f[pairs[i]] = []byte(pairs[i+1])
	}
	return f
}

// equalFiles reports how a and b differ, or "" when they hold the same paths and bytes.
func equalFiles(a, b Files) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d files %q vs %d files %q", len(a), a.Paths(), len(b), b.Paths())
	}
	for p, data := range a {
		other, ok := b[p]
		if !ok {
			return fmt.Sprintf("%q missing", p)
		}
		if !bytes.Equal(data, other) {
			return fmt.Sprintf("%q: %q vs %q", p, data, other)
		}
	}
	return ""
}

// rawNewcEntry builds one newc entry by hand, for archives WriteNewc never writes: magic
// 070702, names followed by extra NULs (as dracut-cpio writes them), other modes.
func rawNewcEntry(magic, name string, extraNULs int, mode int64, data []byte) []byte {
	nameField := name + "\x00" + strings.Repeat("\x00", extraNULs)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		magic, 7, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nameField), 0)
	b.WriteString(nameField)
	b.Write(make([]byte, pad4(int64(b.Len()))))
	b.Write(data)
	b.Write(make([]byte, pad4(int64(len(data)))))
	return b.Bytes()
}

// rawNewcTrailer is the entry that ends an archive.
func rawNewcTrailer() []byte {
	return rawNewcEntry("070701", "TRAILER!!!", 0, 0, nil)
}

// newcOf returns WriteNewc's archive of files.
func newcOf(t testing.TB, files Files) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteNewc(&buf, files); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// packOf returns Pack's archive of files.
func packOf(t testing.TB, files Files) []byte {
	t.Helper()
	b, err := Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gzipOf compresses b as one gzip member.
func gzipOf(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// xzOf compresses b as one xz stream with the given check (xz.CRC32, xz.CRC64).
func xzOf(t testing.TB, b []byte, check byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	xw, err := xz.WriterConfig{DictCap: 1 << 20, CheckSum: check}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := xw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zstdOf compresses b as one zstd frame with a content checksum.
func zstdOf(t testing.TB, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// concat joins byte slices.
func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}
