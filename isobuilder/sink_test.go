package isobuilder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testBaseSize spans several copy chunks and ends mid-sector, so chunking and the tail are
// both exercised.
const testBaseSize = 2*copyChunkSize + 3<<20 + 123

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
	return b
}

// sinkPatches (for images of at least two chunks) covers the start, a patch straddling a
// chunk boundary, two adjacent patches and the very end of the image.
func sinkPatches(size int) []Patch {
	return []Patch{
		{Offset: 0, Data: randomBytes(2048, 1)},
		{Offset: copyChunkSize - 100, Data: randomBytes(300, 2)},
		{Offset: int64(size / 2), Data: randomBytes(4096, 3)},
		{Offset: int64(size/2 + 4096), Data: randomBytes(7, 4)},
		{Offset: int64(size - 50), Data: randomBytes(50, 5)},
	}
}

type testISO struct {
	path string
	data []byte
	file *os.File
	img  *Image
	want [sha256.Size]byte // of the composed image
}

// newTestISO writes random base bytes to a file in dir and opens it as the base of an image.
func newTestISO(t testing.TB, dir string, size int) *testISO {
	t.Helper()
	iso := &testISO{path: filepath.Join(dir, "base.iso"), data: randomBytes(size, 42)}
	if err := os.WriteFile(iso.path, iso.data, 0o644); err != nil {
		t.Fatal(err)
	}
	iso.file = openFile(t, iso.path)
	patches := sinkPatches(size)
	img, err := NewImage(iso.file, int64(size), patches...)
	if err != nil {
		t.Fatal(err)
	}
	iso.img = img
	iso.want = sha256.Sum256(applyPatches(iso.data, patches))
	return iso
}

func openFile(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// assertOnly fails unless dir holds exactly the named entries (so no temporary file is left).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	if got := dirNames(t, dir); strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// pipeSum reads everything written to the returned pipe writer and hashes it.
func pipeSum(t *testing.T) (*os.File, func() [sha256.Size]byte) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan [sha256.Size]byte)
	go func() {
		h := sha256.New()
		io.Copy(h, r)
		r.Close()
		done <- [sha256.Size]byte(h.Sum(nil))
	}()
	return w, func() [sha256.Size]byte {
		w.Close()
		return <-done
	}
}

func TestSinksProduceIdenticalBytes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)

	t.Run("WriteFile", func(t *testing.T) {
		dest := filepath.Join(dir, "out.iso")
		if err := WriteFile(ctx, iso.img, dest, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if fileSum(t, dest) != iso.want {
			t.Error("WriteFile output differs from the patched base")
		}
	})
	t.Run("WriteStream to a buffer", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WriteStream(ctx, iso.img, &buf, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(buf.Bytes()) != iso.want {
			t.Error("WriteStream output differs from the patched base")
		}
	})
	t.Run("WriteStream to a pipe", func(t *testing.T) {
		w, sum := pipeSum(t)
		if err := WriteStream(ctx, iso.img, w, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if sum() != iso.want {
			t.Error("WriteStream output through a pipe differs from the patched base")
		}
	})
	t.Run("WriteTo a file", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "out.iso")
		f, err := os.Create(dest)
		if err != nil {
			t.Fatal(err)
		}
		n, err := iso.img.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != testBaseSize || fileSum(t, dest) != iso.want {
			t.Errorf("WriteTo wrote %d bytes that differ from the patched base", n)
		}
	})
	t.Run("WriteInPlace", func(t *testing.T) {
		editDir := t.TempDir()
		target := newTestISO(t, editDir, testBaseSize)
		if err := WriteInPlace(ctx, target.img, target.path); err != nil {
			t.Fatal(err)
		}
		if fileSum(t, target.path) != iso.want {
			t.Error("in-place edit differs from the patched base")
		}
		assertOnly(t, editDir, "base.iso")
	})
}

func TestKernelCopyMatchesBufferedCopy(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	destinations := []struct {
		name string
		open func(t *testing.T) (*os.File, func() [sha256.Size]byte)
	}{
		{"regular file", func(t *testing.T) (*os.File, func() [sha256.Size]byte) {
			path := filepath.Join(t.TempDir(), "out.iso")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			return f, func() [sha256.Size]byte {
				f.Close()
				return fileSum(t, path)
			}
		}},
		{"pipe", pipeSum},
	}
	for _, dest := range destinations {
		for _, useKernel := range []bool{true, false} {
			name := dest.name + "/buffered"
			if useKernel {
				name = dest.name + "/kernel"
			}
			t.Run(name, func(t *testing.T) {
				f, sum := dest.open(t)
				sw := newSequentialWriter(context.Background(), f, iso.file, nil, useKernel)
				if err := sw.writeImage(iso.img); err != nil {
					t.Fatal(err)
				}
				if sum() != iso.want {
					t.Error("output differs from the patched base")
				}
				if sw.written != testBaseSize {
					t.Errorf("wrote %d bytes, want %d", sw.written, testBaseSize)
				}
				switch {
				case !useKernel && sw.kernelWritten != 0:
					t.Errorf("the kernel copied %d bytes with kernel copies off", sw.kernelWritten)
				case useKernel && runtime.GOOS == "linux" && sw.kernelWritten == 0:
					t.Error("the kernel copied nothing (copy_file_range/sendfile refused?)")
				}
			})
		}
	}
}

func TestWriteFileRefusesExistingDestination(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	dest := filepath.Join(dir, "out.iso")
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(context.Background(), iso.img, dest, WriteOptions{})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), dest) {
		t.Fatalf("WriteFile over an existing file: error %v, want one wrapping fs.ErrExist naming %s", err, dest)
	}
	if b, _ := os.ReadFile(dest); string(b) != "old" {
		t.Errorf("refused WriteFile changed the destination to %d bytes", len(b))
	}
	assertOnly(t, dir, "base.iso", "out.iso")

	if err := WriteFile(context.Background(), iso.img, dest, WriteOptions{Force: true}); err != nil {
		t.Fatalf("WriteFile with Force: %v", err)
	}
	if fileSum(t, dest) != iso.want {
		t.Error("WriteFile with Force did not write the image")
	}
	assertOnly(t, dir, "base.iso", "out.iso")
}

func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	d, err := openOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	for path, content := range map[string]string{src: "new", dst: "old"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// This is the race WriteFile's early check cannot see: dst appeared during the write.
	if err := renameNoReplace(d, "src", "dst"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("renameNoReplace onto an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("renameNoReplace replaced the existing file with %q", b)
	}
	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	if err := renameNoReplace(d, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("renamed file holds %q, want %q", b, "new")
	}
	assertOnly(t, dir, "dst")
}

func TestWriteFileRefusesTheBaseFile(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	hardLink := filepath.Join(dir, "hard.iso")
	symlink := filepath.Join(dir, "sym.iso")
	if err := os.Link(iso.path, hardLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(iso.path, symlink); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, iso.path)
	for _, dest := range []string{iso.path, hardLink, symlink} {
		err := WriteFile(context.Background(), iso.img, dest, WriteOptions{Force: true})
		if !errors.Is(err, ErrOutputIsInput) || !strings.Contains(err.Error(), "the ISO itself") {
			t.Errorf("WriteFile to %s: error %v, want a refusal naming the input ISO", dest, err)
		}
	}
	if fileSum(t, iso.path) != before {
		t.Error("the base file changed")
	}
	if target, err := os.Readlink(symlink); err != nil || target != iso.path {
		t.Errorf("the symlink now reads %q, %v", target, err)
	}
	assertOnly(t, dir, "base.iso", "hard.iso", "sym.iso")
}

func TestWriteFileRefusesNonFileDestination(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(context.Background(), iso.img, sub, WriteOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("WriteFile onto a directory: error %v, want one saying it is a directory", err)
	}
	missing := filepath.Join(dir, "missing", "out.iso")
	if err := WriteFile(context.Background(), iso.img, missing, WriteOptions{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteFile into a missing directory: error %v, want one naming %s", err, missing)
	}
	assertOnly(t, dir, "base.iso", "sub")
	assertOnly(t, sub)
}

func TestWriteFileCancelled(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	dest := filepath.Join(dir, "out.iso")

	t.Run("before the write", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := WriteFile(ctx, iso.img, dest, WriteOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		assertOnly(t, dir, "base.iso")
	})
	t.Run("during the write", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var reportsAfterCancel int
		progress := func(written int64) {
			if ctx.Err() != nil {
				reportsAfterCancel++
			}
			if written >= copyChunkSize {
				cancel()
			}
		}
		err := WriteFile(ctx, iso.img, dest, WriteOptions{Progress: progress})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		// The copy stops at the next chunk, not at the end of the image.
		if reportsAfterCancel > 0 {
			t.Errorf("%d chunks were written after the cancellation", reportsAfterCancel)
		}
		assertOnly(t, dir, "base.iso")
	})
	t.Run("over an existing file", func(t *testing.T) {
		if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		progress := func(int64) { cancel() }
		if err := WriteFile(ctx, iso.img, dest, WriteOptions{Force: true, Progress: progress}); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		if b, _ := os.ReadFile(dest); string(b) != "old" {
			t.Errorf("cancelled WriteFile changed the destination to %d bytes", len(b))
		}
		assertOnly(t, dir, "base.iso", "out.iso")
	})
}

func TestWriteFileShortBase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "short.iso")
	if err := os.WriteFile(path, randomBytes(1<<20, 7), 0o644); err != nil {
		t.Fatal(err)
	}
	// The image claims more bytes than the file holds, as if the ISO were truncated meanwhile.
	img, err := NewImage(openFile(t, path), 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	err = WriteFile(context.Background(), img, filepath.Join(dir, "out.iso"), WriteOptions{})
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "offset 1048576") {
		t.Errorf("WriteFile from a short base: error %v, want unexpected EOF at offset 1048576", err)
	}
	assertOnly(t, dir, "short.iso")
}

func TestProgress(t *testing.T) {
	iso := newTestISO(t, t.TempDir(), testBaseSize)
	var reports []int64
	opts := WriteOptions{Progress: func(n int64) { reports = append(reports, n) }}
	if err := WriteStream(context.Background(), iso.img, io.Discard, opts); err != nil {
		t.Fatal(err)
	}
	if len(reports) == 0 || reports[len(reports)-1] != testBaseSize {
		t.Fatalf("progress reports %v, want the last to be %d", reports, testBaseSize)
	}
	var prev int64
	for _, n := range reports {
		if n <= prev || n-prev > 64<<20 {
			t.Fatalf("progress went from %d to %d", prev, n)
		}
		prev = n
	}

	empty, err := NewImage(bytes.NewReader(nil), 0)
	if err != nil {
		t.Fatal(err)
	}
	reports = nil
	if err := WriteStream(context.Background(), empty, io.Discard, opts); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0] != 0 {
		t.Errorf("progress reports for an empty image %v, want [0]", reports)
	}
}

type diskFullWriter struct {
	limit   int
	written int
}

var errDiskFull = errors.New("disk full")

func (w *diskFullWriter) Write(p []byte) (int, error) {
	if w.written+len(p) > w.limit {
		n := w.limit - w.written
		w.written = w.limit
		return n, errDiskFull
	}
	w.written += len(p)
	return len(p), nil
}

func TestWriteStreamErrors(t *testing.T) {
	iso := newTestISO(t, t.TempDir(), testBaseSize)
	w := &diskFullWriter{limit: copyChunkSize + 10}
	if err := WriteStream(context.Background(), iso.img, w, WriteOptions{}); !errors.Is(err, errDiskFull) {
		t.Errorf("WriteStream to a failing writer: error %v, want %v", err, errDiskFull)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	if err := WriteStream(ctx, iso.img, &buf, WriteOptions{}); !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Errorf("WriteStream with a cancelled context: %v after %d bytes, want context.Canceled before any", err, buf.Len())
	}
}

func TestWriteInPlaceRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	iso := newTestISO(t, dir, testBaseSize)
	ctx := context.Background()

	sameSize := filepath.Join(dir, "copy.iso")
	if err := os.WriteFile(sameSize, iso.data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteInPlace(ctx, iso.img, sameSize); err == nil || !strings.Contains(err.Error(), "not the file") {
		t.Errorf("WriteInPlace on a copy of the base: error %v, want a refusal", err)
	}
	if fileSum(t, sameSize) != sha256.Sum256(iso.data) {
		t.Error("refused WriteInPlace changed the file")
	}

	// Without a file base only the size can be checked.
	memImg, err := NewImage(bytes.NewReader(iso.data), int64(len(iso.data)), iso.img.Patches()...)
	if err != nil {
		t.Fatal(err)
	}
	smaller := filepath.Join(dir, "small.iso")
	if err := os.WriteFile(smaller, iso.data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteInPlace(ctx, memImg, smaller); err == nil || !strings.Contains(err.Error(), "1000 bytes") {
		t.Errorf("WriteInPlace on a smaller file: error %v, want one naming its size", err)
	}
	if err := WriteInPlace(ctx, memImg, sameSize); err != nil {
		t.Fatalf("WriteInPlace of an in-memory image onto a same-size file: %v", err)
	}
	if fileSum(t, sameSize) != iso.want {
		t.Error("in-place edit differs from the patched base")
	}

	ctxCancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := WriteInPlace(ctxCancelled, iso.img, iso.path); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteInPlace with a cancelled context: %v", err)
	}
	if fileSum(t, iso.path) != sha256.Sum256(iso.data) {
		t.Error("cancelled WriteInPlace changed the file")
	}
}

// BenchmarkWriteFile compares WriteFile with a plain io.Copy of the same 256 MiB file (which
// Go also does with copy_file_range) and with WriteFile's buffered fallback. Each variant
// syncs its output, as WriteFile does.
func BenchmarkWriteFile(b *testing.B) {
	const size = 256 << 20
	dir := b.TempDir()
	iso := newTestISO(b, dir, size)
	dest := filepath.Join(dir, "out.iso")

	b.Run("WriteFile", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if err := WriteFile(context.Background(), iso.img, dest, WriteOptions{Force: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("buffered", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			syncedCopy(b, dest, func(f *os.File) error {
				return newSequentialWriter(context.Background(), f, iso.file, nil, false).writeImage(iso.img)
			})
		}
	})
	b.Run("io.Copy", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			syncedCopy(b, dest, func(f *os.File) error {
				src, err := os.Open(iso.path)
				if err != nil {
					return err
				}
				defer src.Close()
				_, err = io.Copy(f, src)
				return err
			})
		}
	})
}

func syncedCopy(b *testing.B, dest string, copyTo func(*os.File) error) {
	f, err := os.Create(dest)
	if err != nil {
		b.Fatal(err)
	}
	if err := copyTo(f); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
