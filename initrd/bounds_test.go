package initrd

import (
	"bytes"
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
