package initrd

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cavaliercoder/go-cpio"
	"github.com/klauspost/compress/zstd"
)

// zstdArchiveOf writes one zstd stream of a newc archive whose member name holds size bytes
// from data (an endless reader), then a member "kept" holding "k".
func zstdArchiveOf(t testing.TB, name string, size int64, data io.Reader) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	cw := cpio.NewWriter(zw)
	if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.ModeRegular | 0o600, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(cw, data, size); err != nil {
		t.Fatal(err)
	}
	if err := cw.WriteHeader(&cpio.Header{Name: "kept", Mode: cpio.ModeRegular | 0o600, Size: 1}); err != nil {
		t.Fatal(err)
	}
	cw.Write([]byte("k"))
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A zstd archive is decompressed as it is read: its compressed frame is not held whole.
func TestReadStreamsZstd(t *testing.T) {
	const size = 48 << 20
	noise := rand.NewChaCha8([32]byte{7}) // incompressible: the frame is as large as the data
	archive := zstdArchiveOf(t, "skipped", size, noise)
	var files Files
	var err error
	allocated := allocatedDuring(func() {
		files, err = Read(bytes.NewReader(archive), ReadOptions{MaxSize: 1 << 30, Match: func(p string) bool { return p == "kept" }})
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(files["kept"]) != "k" || len(files) != 1 {
		t.Errorf("files %v, want only kept", files.Paths())
	}
	if allocated > 16<<20 {
		t.Errorf("reading a %d-byte zstd archive allocated %d bytes", len(archive), allocated)
	}
}

// A kept member larger than MaxFileSize is refused from its header, whatever the total budget.
func TestReadMaxFileSize(t *testing.T) {
	bomb := zstdArchiveOf(t, IgnitionPath, 100<<20, zeros{})
	var err error
	allocated := allocatedDuring(func() {
		_, err = Read(bytes.NewReader(bomb), ReadOptions{MaxSize: 4 << 30, MaxFileSize: 1 << 20, Match: func(p string) bool { return p == IgnitionPath }})
	})
	if err == nil || !strings.Contains(err.Error(), IgnitionPath) || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("a 100 MiB %s with MaxFileSize 1 MiB: %v", IgnitionPath, err)
	}
	if allocated > 16<<20 {
		t.Errorf("refusing it allocated %d bytes", allocated)
	}
	// A member that is not kept may be larger: it is skipped, not held.
	if _, err := Read(bytes.NewReader(bomb), ReadOptions{MaxSize: 4 << 30, MaxFileSize: 1 << 20, Match: func(p string) bool { return p == "kept" }}); err != nil {
		t.Errorf("a large member that is not kept: %v", err)
	}
}

// gzipBomb is a gzip newc archive holding a member of size zero bytes: about a thousand times
// smaller than what it decompresses to.
func gzipBomb(t testing.TB, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	cw := cpio.NewWriter(zw)
	if err := cw.WriteHeader(&cpio.Header{Name: "big", Mode: cpio.ModeRegular | 0o600, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(cw, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// With MaxRatio, an input that decompresses to far more than its size is refused once past
// the slack, long before MaxSize: a small crafted initrd cannot cost minutes of CPU. Without
// it, the same input is read.
func TestReadMaxRatio(t *testing.T) {
	bomb := gzipBomb(t, RatioSlack+16<<20)
	_, err := Read(bytes.NewReader(bomb), ReadOptions{MaxSize: 4 << 30, MaxRatio: 64})
	var ratio *RatioError
	if !errors.As(err, &ratio) || ratio.Ratio != 64 || !strings.Contains(err.Error(), "decompression bomb") {
		t.Fatalf("a %d-byte archive of %d bytes: %v, want a *RatioError", len(bomb), RatioSlack+16<<20, err)
	}
	if ratio.Decompressed > RatioSlack+64*int64(len(bomb))+64<<10 {
		t.Errorf("refused only after %d bytes", ratio.Decompressed)
	}
	if _, err := Read(bytes.NewReader(bomb), ReadOptions{MaxSize: 4 << 30}); err != nil {
		t.Errorf("without MaxRatio: %v", err)
	}
}

// A done context ends a read with its error, at the next read of the input.
func TestReadEndsWithItsContext(t *testing.T) {
	bomb := gzipBomb(t, 8<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(bytes.NewReader(bomb), ReadOptions{Context: ctx}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled read: %v, want context.Canceled", err)
	}
	// Cancelled in the middle, from a member's data, as a signal would.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	r := &cancelAfter{r: bytes.NewReader(bomb), n: int64(len(bomb)) / 2, cancel: cancel}
	if _, err := Read(r, ReadOptions{Context: ctx}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled midway: %v, want context.Canceled", err)
	}
}

// cancelAfter calls cancel once n bytes of r were read.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= int64(n); c.n <= 0 {
		c.cancel()
	}
	return n, err
}
