package isobuilder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// copyChunkSize bounds both the copy buffer and each kernel copy, so memory stays independent
// of the ISO size and cancellation and progress are checked at least this often.
const copyChunkSize = 4 << 20

// Progress is told how many bytes were written so far; nil means no reporting.
type Progress func(written int64)

// WriteOptions controls WriteFile and WriteStream.
type WriteOptions struct {
	Force    bool     // replace an existing destination
	Progress Progress // called at least every 64 MiB and at the end
	// Perm is the mode of a new file before the umask; 0 means PublicPerm. An output that
	// carries a config is a secret: SecretPerm.
	Perm fs.FileMode
	// Keep names the work's inputs (its config files): the output may not be one of them
	// (Stage.Keep). The image's own base file is always kept.
	Keep []string
}

func (o WriteOptions) perm() fs.FileMode {
	if o.Perm == 0 {
		return PublicPerm
	}
	return o.Perm
}

// WriteTo streams the composed bytes to w. When w and the base are both *os.File, unchanged
// spans are moved by the kernel (copy_file_range to a regular file, sendfile to a pipe, socket
// or device); otherwise, or where the kernel refuses, they are copied through a 4 MiB buffer.
func (img *Image) WriteTo(w io.Writer) (int64, error) {
	sw := newSequentialWriter(context.Background(), w, img.base, nil, true)
	err := sw.writeImage(img)
	return sw.written, err
}

// WriteFile writes img to dest atomically, through a Stage: a temporary file in dest's
// directory (unnamed on Linux) receives the bytes and is synced, then named dest. Without
// opts.Force an existing dest is refused (the error wraps fs.ErrExist), also when it appears
// during the write. A dest that is the base file itself is refused: that is what
// WriteInPlace is for. On any error or cancellation of ctx the temporary file is removed and
// dest is untouched.
func WriteFile(ctx context.Context, img *Image, dest string, opts WriteOptions) error {
	if err := checkNotBase(img, dest); err != nil {
		return err
	}
	stage := NewStage(opts.Force)
	defer stage.Abort()
	stage.Keep(opts.Keep...)
	f, err := stage.Create(dest, opts.perm())
	if err != nil {
		return err
	}
	if err := newSequentialWriter(ctx, f, img.base, opts.Progress, true).writeImage(img); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return stage.Commit()
}

// checkNotBase refuses a dest that is the file the image reads its base from.
func checkNotBase(img *Image, dest string) error {
	if baseInfo, ok := img.baseInfo(); ok {
		if destInfo, err := os.Stat(dest); err == nil && os.SameFile(baseInfo, destInfo) {
			return fmt.Errorf("writing %s: %w (the ISO itself); "+
				"to modify the ISO, edit it in place instead of writing an output", dest, ErrOutputIsInput)
		}
	}
	return nil
}

// WriteInPlace writes only the patches into the file at path, then syncs it. The file must be
// the base the image was built on: the same size and, when the base is a file, the same file.
func WriteInPlace(ctx context.Context, img *Image, path string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("editing in place: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("editing %s in place: %w", path, cerr)
		}
	}()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("editing %s in place: %w", path, err)
	}
	if info.Size() != img.size {
		return fmt.Errorf("editing %s in place: the file is %d bytes but the image is %d bytes; in-place editing needs the input ISO itself",
			path, info.Size(), img.size)
	}
	if baseInfo, ok := img.baseInfo(); ok && !os.SameFile(info, baseInfo) {
		return fmt.Errorf("editing %s in place: it is not the file the image was read from", path)
	}
	return writePatches(ctx, img, f, path)
}

// writePatches writes img's patches into f, the file called name, and syncs it.
func writePatches(ctx context.Context, img *Image, f *os.File, name string) error {
	for _, p := range img.patches {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("editing %s in place: %w", name, err)
		}
		if _, err := f.WriteAt(p.Data, p.Offset); err != nil {
			return fmt.Errorf("editing %s in place: writing %d bytes at offset %d: %w", name, len(p.Data), p.Offset, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("editing %s in place: %w", name, err)
	}
	return nil
}

// WriteStream writes the composed bytes to w (stdout, a pipe, a USB device), checking ctx
// between chunks. When w is a regular file or a block device it is synced at the end, so a
// USB stick holds the image once WriteStream returns.
func WriteStream(ctx context.Context, img *Image, w io.Writer, opts WriteOptions) error {
	if err := newSequentialWriter(ctx, w, img.base, opts.Progress, true).writeImage(img); err != nil {
		return fmt.Errorf("writing image stream: %w", err)
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("writing image stream to %s: %w", f.Name(), err)
	}
	blockDevice := info.Mode()&fs.ModeDevice != 0 && info.Mode()&fs.ModeCharDevice == 0
	if info.Mode().IsRegular() || blockDevice {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("writing image stream to %s: %w", f.Name(), err)
		}
	}
	return nil
}

// baseInfo identifies the base file, when the base is one, for the same-file checks.
func (img *Image) baseInfo() (fs.FileInfo, bool) {
	statter, ok := img.base.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, false
	}
	info, err := statter.Stat()
	return info, err == nil
}

// sequentialWriter writes an image from start to end to dst, the engine behind every sink that
// produces the whole image.
type sequentialWriter struct {
	ctx      context.Context
	dst      io.Writer
	base     io.ReaderAt
	progress Progress
	kernel   *kernelCopier // nil when the kernel cannot copy from base to dst
	buf      []byte        // allocated on the first buffered copy
	written  int64
	reported int64
	// kernelWritten counts the bytes the kernel moved; tests check the fast path ran.
	kernelWritten int64
}

func newSequentialWriter(ctx context.Context, dst io.Writer, base io.ReaderAt, progress Progress, useKernel bool) *sequentialWriter {
	sw := &sequentialWriter{ctx: ctx, dst: dst, base: base, progress: progress, reported: -1}
	if useKernel {
		sw.kernel = newKernelCopier(dst, base)
	}
	return sw
}

func (sw *sequentialWriter) writeImage(img *Image) error {
	var pos int64
	for _, p := range img.patches {
		if err := sw.copyBase(pos, p.Offset-pos); err != nil {
			return err
		}
		if err := sw.ctx.Err(); err != nil {
			return err
		}
		if _, err := sw.dst.Write(p.Data); err != nil {
			return fmt.Errorf("writing %d bytes at offset %d: %w", len(p.Data), p.Offset, err)
		}
		sw.advance(int64(len(p.Data)))
		pos = p.end()
	}
	if err := sw.copyBase(pos, img.size-pos); err != nil {
		return err
	}
	sw.report()
	return nil
}

// copyBase copies n unchanged bytes of the base at off to dst.
func (sw *sequentialWriter) copyBase(off, n int64) error {
	for n > 0 {
		if err := sw.ctx.Err(); err != nil {
			return err
		}
		chunk := min(n, copyChunkSize)
		copied, err := sw.copyChunk(off, chunk)
		sw.advance(copied)
		off += copied
		n -= copied
		if err != nil {
			return err
		}
	}
	return nil
}

// copyChunk copies up to n bytes at off, by the kernel when it can, and reports how many.
func (sw *sequentialWriter) copyChunk(off, n int64) (int64, error) {
	if sw.kernel != nil {
		copied, err := sw.kernel.copy(off, n)
		if !errors.Is(err, errNoKernelCopy) {
			sw.kernelWritten += copied
			if err != nil {
				return copied, fmt.Errorf("copying the input at offset %d: %w", off+copied, err)
			}
			return copied, nil
		}
		sw.kernel = nil
	}
	if sw.buf == nil {
		sw.buf = make([]byte, copyChunkSize)
	}
	buf := sw.buf[:n]
	got, err := sw.base.ReadAt(buf, off)
	if got < len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("reading the input at offset %d: %w", off+int64(got), err)
	}
	written, err := sw.dst.Write(buf)
	if err != nil {
		return int64(written), fmt.Errorf("writing %d bytes at offset %d: %w", n, off, err)
	}
	return n, nil
}

func (sw *sequentialWriter) advance(n int64) {
	sw.written += n
	sw.report()
}

func (sw *sequentialWriter) report() {
	if sw.progress != nil && sw.written != sw.reported {
		sw.progress(sw.written)
		sw.reported = sw.written
	}
}
