package initrd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cavaliercoder/go-cpio"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

func TestReadFixtureCompressed(t *testing.T) {
	files, err := Read(bytes.NewReader(fixtures.Bytes(t, "initrd-compressed.img")), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"gzip/hello", "gzip/world",
		"uncompressed-1/hello", "uncompressed-1/world",
		"uncompressed-2/hello", "uncompressed-2/world",
		"xz/hello", "xz/world",
		"zstd/hello", "zstd/world",
	}
	if got := files.Paths(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %q, want %q", got, want)
	}
	for p, content := range map[string]string{"gzip/hello": "HELLO\n", "xz/world": "WORLD\n", "zstd/hello": "HELLO\n", "uncompressed-2/world": "WORLD\n"} {
		if string(files[p]) != content {
			t.Errorf("%s holds %q, want %q", p, files[p], content)
		}
	}

	xzOnly, err := Read(bytes.NewReader(fixtures.Bytes(t, "initrd-compressed.img")),
		ReadOptions{Match: func(p string) bool { return strings.HasPrefix(p, "xz/") }})
	if err != nil {
		t.Fatal(err)
	}
	if got := xzOnly.Paths(); strings.Join(got, " ") != "xz/hello xz/world" {
		t.Errorf("Match xz/*: %q", got)
	}
}

func TestReadFixtureRedundantLastWins(t *testing.T) {
	files, err := Read(bytes.NewReader(fixtures.Bytes(t, "initrd-redundant.img")), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || string(files["data/file"]) != "third\n" {
		t.Errorf("got %q, want only data/file holding the third archive's \"third\\n\"", files)
	}
}

func TestReadKeepsStoredPaths(t *testing.T) {
	for fixture, path := range map[string]string{
		"initrd-traversal-absolute.img": "/etc/adjtime",
		"initrd-traversal-relative.img": "../f",
	} {
		files, err := Read(bytes.NewReader(fixtures.Bytes(t, fixture)), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		if got := files.Paths(); len(got) != 1 || got[0] != path {
			t.Errorf("%s: paths %q, want %q as stored", fixture, got, path)
		}
	}
}

func TestReadConcatenated(t *testing.T) {
	first := filesOf(IgnitionPath, "first", "a/kept", "from gzip")
	plain := concat(rawNewcEntry("070701", "plain", 0, 0o100644, []byte("plain data")), rawNewcTrailer())
	input := concat(
		packOf(t, first),
		plain, // right after the xz stream, which ends 4-aligned
		make([]byte, 4),
		gzipOf(t, newcOf(t, filesOf("g", "gzip"))),
		xzOf(t, newcOf(t, filesOf("x64", "crc64")), xz.CRC64),
		make([]byte, 3), // zeros need not be aligned before a compressed archive
		zstdOf(t, newcOf(t, filesOf("z", "zstd"))),
		packOf(t, filesOf(IgnitionPath, "last")),
		make([]byte, 1000),
	)
	files, err := Read(bytes.NewReader(input), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := filesOf(IgnitionPath, "last", "a/kept", "from gzip", "plain", "plain data", "g", "gzip", "x64", "crc64", "z", "zstd")
	if diff := equalFiles(files, want); diff != "" {
		t.Error(diff)
	}
}

func TestReadOnlyRegularFiles(t *testing.T) {
	archive := concat(
		rawNewcEntry("070701", "dir", 0, 0o040755, nil),
		rawNewcEntry("070701", "dir/link", 0, 0o120777, []byte("target")),
		rawNewcEntry("070701", "dev/console", 0, 0o020600, nil),
		rawNewcEntry("070701", "fifo", 0, 0o010644, nil),
		rawNewcEntry("070701", "dir/file", 0, 0o100755, []byte("regular")),
		rawNewcTrailer(),
	)
	files, err := Read(bytes.NewReader(archive), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := equalFiles(files, filesOf("dir/file", "regular")); diff != "" {
		t.Error(diff)
	}
}

// dracut-cpio pads names with extra NULs, and 070702 archives carry a checksum field.
func TestReadPaddedNamesAnd070702(t *testing.T) {
	archive := concat(
		rawNewcEntry("070702", "usr/lib/padded", 7, 0o100644, []byte("one")),
		rawNewcEntry("070701", "x", 2, 0o100644, []byte("two")),
		rawNewcEntry("070702", "TRAILER!!!", 5, 0, nil),
	)
	for name, input := range map[string][]byte{"plain": archive, "xz": xzOf(t, archive, xz.CRC32)} {
		files, err := Read(bytes.NewReader(input), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := equalFiles(files, filesOf("usr/lib/padded", "one", "x", "two")); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

func TestReadEmptyInputs(t *testing.T) {
	for name, input := range map[string][]byte{"nothing": nil, "zero area": make([]byte, 256<<10)} {
		files, err := Read(bytes.NewReader(input), ReadOptions{})
		if err != nil || files == nil || len(files) != 0 {
			t.Errorf("%s: %q, %v; want no files and no error", name, files, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	archive := newcOf(t, filesOf(IgnitionPath, `{"ignition":{"version":"3.0.0"}}`))
	packed := packOf(t, filesOf(IgnitionPath, `{"ignition":{"version":"3.0.0"}}`))
	withGarbage := concat(archive, []byte("\x00\x00garbage"))
	withZeros := concat(archive, make([]byte, 100))
	for _, tc := range []struct {
		name, wantErr string
		input         []byte
	}{
		{"text", "unrecognized data at byte offset 0", []byte("hello, world\n")},
		{"junk after archives", fmt.Sprintf("unrecognized data at byte offset %d", len(packed)+8), concat(packed, make([]byte, 8), []byte("junk"))},
		{"short junk", "unrecognized data at byte offset 4", []byte("\x00\x00\x00\x00\x01")},
		{"garbage after trailer in xz", "trailing garbage inside compressed archive", xzOf(t, withGarbage, xz.CRC32)},
		{"garbage after trailer in gzip", "trailing garbage inside compressed archive", gzipOf(t, withGarbage)},
		{"garbage after trailer in zstd", "trailing garbage inside compressed archive", zstdOf(t, withGarbage)},
		{"truncated plain archive", "truncated archive", archive[:len(archive)/2]},
		{"plain archive without trailer", "ends at offset 156 without a TRAILER!!! entry", archive[:len(archive)-124]},
		{"truncated xz", "xz archive at byte offset 0: truncated xz stream", packed[:len(packed)/2]},
		{"truncated xz footer", "truncated xz stream", packed[:len(packed)-4]},
		{"truncated gzip", "gzip archive at byte offset 0: truncated gzip stream", gzipOf(t, archive)[:40]},
		{"truncated zstd", "truncated zstd frame", zstdOf(t, archive)[:20]},
		{"corrupt xz check", "xz archive", flipByte(packed, len(packed)-30)},
		{"bad header hex", "not hexadecimal", concat([]byte("070701zzzzzzzz"), archive[14:])},
		{"name too long", "name size", concat(archive[:94], []byte("00010000"), archive[102:])},
		{"unterminated name", "not NUL-terminated", bytes.Replace(archive, []byte("config.ign\x00"), []byte("config.ignX"), 1)},
		{"second archive bad", fmt.Sprintf("newc cpio archive at byte offset %d", len(archive)+4), concat(archive, make([]byte, 4), []byte("070701"), make([]byte, 104))},
	} {
		_, err := Read(bytes.NewReader(tc.input), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
	for name, input := range map[string][]byte{"xz": xzOf(t, withZeros, xz.CRC32), "gzip": gzipOf(t, withZeros), "zstd": zstdOf(t, withZeros)} {
		if _, err := Read(bytes.NewReader(input), ReadOptions{}); err != nil {
			t.Errorf("zeros after the trailer inside %s: %v", name, err)
		}
	}
}

func flipByte(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// xzBomb is an xz archive of one 100 MiB file of zeros: about 16 KiB compressed.
func xzBomb(t testing.TB) []byte {
	t.Helper()
	const size = 100 << 20
	var buf bytes.Buffer
	xw, err := xz.WriterConfig{DictCap: 1 << 20, CheckSum: xz.CRC32, Matcher: lzma.HashTable4}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	cw := cpio.NewWriter(xw)
	if err := cw.WriteHeader(&cpio.Header{Name: "bomb", Mode: cpio.ModeRegular | 0o600, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(cw, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := xw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocatedDuring returns the bytes allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadMaxSize(t *testing.T) {
	bomb := xzBomb(t)
	var err error
	start := time.Now()
	allocated := allocatedDuring(func() {
		_, err = Read(bytes.NewReader(bomb), ReadOptions{MaxSize: 1 << 20})
	})
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 1048576 bytes") {
		t.Fatalf("xz bomb of %d bytes with MaxSize 1 MiB: %v", len(bomb), err)
	}
	if allocated > 16<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", allocated)
	}
	t.Logf("refused a %d-byte bomb in %v, allocating %d bytes: %v", len(bomb), time.Since(start), allocated, err)

	// Zeros after the trailer inside a compressed stream count too.
	var zeroTail bytes.Buffer
	zw, err := gzip.NewWriterLevel(&zeroTail, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(newcOf(t, filesOf("f", "x")))
	if _, err := io.CopyN(zw, zeros{}, 100<<20); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	allocated = allocatedDuring(func() {
		_, err = Read(bytes.NewReader(zeroTail.Bytes()), ReadOptions{MaxSize: 1 << 20})
	})
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 1048576 bytes") {
		t.Fatalf("gzip of an archive and 100 MiB of zeros with MaxSize 1 MiB: %v", err)
	}
	if allocated > 16<<20 {
		t.Errorf("refusing 100 MiB of zeros after the trailer allocated %d bytes", allocated)
	}

	// The limit counts every archive's bytes, headers and trailers included.
	archive := newcOf(t, filesOf("f", "1234"))
	twice := concat(archive, archive)
	if _, err := Read(bytes.NewReader(twice), ReadOptions{MaxSize: int64(len(twice))}); err != nil {
		t.Errorf("two archives exactly at the limit: %v", err)
	}
	if _, err := Read(bytes.NewReader(twice), ReadOptions{MaxSize: int64(len(twice) - 1)}); err == nil {
		t.Errorf("two archives one byte over the limit: no error")
	}
	// A member larger than what is left is refused from its header.
	big := concat(rawNewcEntry("070701", "big", 0, 0o100644, make([]byte, 4096)), rawNewcTrailer())
	if _, err := Read(bytes.NewReader(big[:200]), ReadOptions{MaxSize: 1000}); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Errorf("4 KiB member with a 1000-byte limit: %v", err)
	}
}

// An xz header may ask for a dictionary of up to 4 GiB, which the decoder would allocate.
func TestReadRefusesHugeXZDictionary(t *testing.T) {
	packed := packOf(t, filesOf(IgnitionPath, "{}"))
	// The first block header follows the 12-byte stream header: size, flags, then the LZMA2
	// filter: id 0x21, one byte of properties, the dictionary size code.
	i := bytes.Index(packed[12:], []byte{0x21, 0x01})
	if i < 0 {
		t.Fatalf("no LZMA2 filter in the first block header: % x", packed[12:24])
	}
	huge := append([]byte(nil), packed...)
	huge[12+i+2] = 40 // 4 GiB - 1
	var err error
	allocated := allocatedDuring(func() { _, err = Read(bytes.NewReader(huge), ReadOptions{}) })
	if err == nil || !strings.Contains(err.Error(), "dictionary") {
		t.Errorf("4 GiB dictionary: %v", err)
	}
	if allocated > 16<<20 {
		t.Errorf("refusing a 4 GiB dictionary allocated %d bytes", allocated)
	}
}
