package initrd

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// defaultMaxSize is ReadOptions.MaxSize when it is 0: far more than any customization archive,
// and enough for a whole initramfs of the CoreOS fixtures.
const defaultMaxSize = 64 << 20

// ReadOptions bound and filter reading.
type ReadOptions struct {
	// Match selects the regular-file paths to keep; nil keeps all.
	Match func(path string) bool
	// MaxSize bounds the total decompressed bytes read (archives + data); 0 means a default
	// of 64 MiB. Past it: an error saying the archive is larger than the limit.
	MaxSize int64
	// MaxFileSize bounds each file kept (Match), which is held in memory; 0 means MaxSize.
	MaxFileSize int64
	// MaxRatio, when set, bounds the decompressed bytes to MaxRatio times the input read so
	// far, plus RatioSlack: a small crafted input cannot cost minutes of decompression before
	// MaxSize ends it. Real initramfs images decompress to a few times their size.
	MaxRatio int64
	// Context, when set, ends the read with its error once it is done (a signal, a timeout).
	Context context.Context
}

// RatioSlack is what any input may decompress to beyond ReadOptions.MaxRatio times its size:
// room for a small archive of very compressible files (an Ignition config of up to
// MaxIgnitionSize, padding).
const RatioSlack = 2 * MaxIgnitionSize

// Read decodes a sequence of concatenated archives (gzip, xz with CRC32 or CRC64, zstd, or
// uncompressed newc 070701/070702), with runs of zero bytes between them, until EOF. It keeps
// regular files only; a later duplicate replaces an earlier one, as the kernel does; names
// padded with extra NULs are accepted; data after a trailer inside a compressed stream must be
// zeros; anything that is not an archive is an error naming the byte offset. Paths are returned
// as stored, so they may be absolute or contain "..": Extract refuses those.
func Read(r io.Reader, opts ReadOptions) (Files, error) {
	limit := opts.MaxSize
	if limit <= 0 {
		limit = defaultMaxSize
	}
	counter := &countingReader{r: r}
	rd := &reader{
		in:      bufio.NewReaderSize(counter, 64<<10),
		counter: counter,
		budget:  &budget{limit: limit, left: limit, ratio: opts.MaxRatio, input: counter, ctx: opts.Context},
		match:   opts.Match,
		maxFile: cmp.Or(opts.MaxFileSize, limit),
		files:   Files{},
	}
	for {
		if err := skipZeros(rd.in); err == io.EOF {
			return rd.files, nil
		} else if err != nil {
			return nil, fmt.Errorf("initrd: reading at byte offset %d: %w", rd.offset(), err)
		}
		if err := rd.readArchive(); err != nil {
			return nil, err
		}
	}
}

// reader holds the state shared by the archives of one initrd.
type reader struct {
	in      *bufio.Reader
	counter *countingReader
	budget  *budget
	match   func(string) bool
	maxFile int64
	files   Files
}

// keep reports whether the regular file name of size bytes is kept: one that Match selects
// must fit in MaxFileSize, since it is held in memory.
func (rd *reader) keep(name string, size int64) (bool, error) {
	if rd.match != nil && !rd.match(name) {
		return false, nil
	}
	if size > rd.maxFile {
		return false, fmt.Errorf("file %q is %d bytes, more than the %d bytes it may have", name, size, rd.maxFile)
	}
	return true, nil
}

// offset is the position in the raw input of the next byte in.
func (rd *reader) offset() int64 {
	return rd.counter.n - int64(rd.in.Buffered())
}

// readArchive reads the archive at the current offset, compressed or not.
func (rd *reader) readArchive() error {
	start := rd.offset()
	head, _ := rd.in.Peek(sniffLen)
	f := sniff(head)
	var err error
	switch f {
	case formatNewc:
		err = readNewc(&budgetReader{r: rd.in, b: rd.budget}, rd.budget, rd.keep, rd.files)
	case formatGzip:
		err = rd.readGzip()
	case formatXZ:
		err = rd.readXZ()
	case formatZstd:
		err = rd.readZstd()
	case formatZstdSkippable:
		err = skipZstdSkippableFrame(rd.in)
	default:
		return fmt.Errorf("initrd: unrecognized data at byte offset %d (% x): not a newc cpio archive or a gzip, xz or zstd stream", start, head)
	}
	if err != nil {
		return fmt.Errorf("initrd: %s archive at byte offset %d: %w", f, start, err)
	}
	return nil
}

func (rd *reader) readGzip() error {
	zr, err := gzip.NewReader(rd.in)
	if err != nil {
		return truncated(err, "gzip header")
	}
	zr.Multistream(false) // the next gzip member is the next archive
	return rd.readCompressed(formatGzip, zr)
}

func (rd *reader) readXZ() error {
	if err := checkXZDictionary(rd.in); err != nil {
		return err
	}
	// go-xz allocates the larger of DictCap and the dictionary the stream declares: the
	// minimum keeps it to what the stream declares instead of an 8 MiB default.
	xr, err := xz.ReaderConfig{DictCap: lzma.MinDictCap, SingleStream: true}.NewReader(rd.in)
	if err != nil {
		return truncated(err, "xz header")
	}
	return rd.readCompressed(formatXZ, &xzStream{r: xr, in: rd.in})
}

func (rd *reader) readZstd() error {
	dec, err := zstd.NewReader(newZstdFrame(rd.in), zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return err
	}
	defer dec.Close()
	return rd.readCompressed(formatZstd, dec)
}

// readCompressed reads the newc archive in a decompressed stream, then checks that only zeros
// follow its trailer, reading the stream to its end so that its checksum is verified.
func (rd *reader) readCompressed(f format, decompressed io.Reader) error {
	r := &budgetReader{r: &decoderErrors{r: decompressed, f: f}, b: rd.budget}
	if err := readNewc(r, rd.budget, rd.keep, rd.files); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if i := firstNonZero(buf[:n]); i >= 0 {
			return fmt.Errorf("found trailing garbage inside compressed archive, at byte %d of its decompressed data", r.n-int64(n)+int64(i))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decoderErrors tells a compressed stream cut short from an archive cut short, which a
// decoder both report as io.ErrUnexpectedEOF.
type decoderErrors struct {
	r io.Reader
	f format
}

func (d *decoderErrors) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err == io.ErrUnexpectedEOF {
		err = fmt.Errorf("truncated %s stream", d.f)
	}
	return n, err
}

// xzStream ends the decompressed stream at the end of the xz stream. In single-stream mode
// the go-xz decoder reads one byte past the stream to check that the input ends there; in an
// initrd another archive or zero padding follows, so that byte is handed back to in.
type xzStream struct {
	r  *xz.Reader
	in *bufio.Reader
}

// xzDataAfterStream is the message of the go-xz error for a byte after a single stream.
const xzDataAfterStream = "xz: unexpected data after stream"

func (s *xzStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err.Error() == xzDataAfterStream {
		if uerr := s.in.UnreadByte(); uerr != nil {
			return n, uerr
		}
		return n, io.EOF
	}
	return n, err
}

// skipZeros consumes the zero bytes at the start of in; it returns io.EOF if in ends first.
func skipZeros(in *bufio.Reader) error {
	for {
		if in.Buffered() == 0 {
			if _, err := in.Peek(1); err != nil {
				return err
			}
		}
		buf, _ := in.Peek(in.Buffered())
		i := firstNonZero(buf)
		if i >= 0 {
			_, err := in.Discard(i)
			return err
		}
		if _, err := in.Discard(len(buf)); err != nil {
			return err
		}
	}
}

// firstNonZero returns the index of the first byte of b that is not zero, or -1.
func firstNonZero(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// budget is what is left of ReadOptions.MaxSize for the whole input, with the input's size
// bound (MaxRatio) and the read's context.
type budget struct {
	limit, left int64
	ratio       int64
	input       *countingReader
	ctx         context.Context
}

// check fails once the context is done or the bytes decompressed pass the ratio bound.
func (b *budget) check() error {
	if b.ctx != nil {
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	if used := b.limit - b.left; b.ratio > 0 && used > RatioSlack+b.ratio*b.input.n {
		return &RatioError{Input: b.input.n, Decompressed: used, Ratio: b.ratio}
	}
	return nil
}

// RatioError is an input that decompresses to more than ReadOptions.MaxRatio times its size.
type RatioError struct {
	Input, Decompressed, Ratio int64
}

func (e *RatioError) Error() string {
	return fmt.Sprintf("the first %d bytes decompress to more than %d bytes, over %d times their size: "+
		"not an initramfs but a decompression bomb", e.Input, e.Decompressed, e.Ratio)
}

// budgetReader charges the bytes read from r to b, and fails once they exceed it.
type budgetReader struct {
	r io.Reader
	b *budget
	n int64 // bytes read through this reader
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if err := br.b.check(); err != nil {
		return 0, err
	}
	if int64(len(p)) > br.b.left+1 {
		p = p[:br.b.left+1] // one byte more than allowed tells "at the limit" from "past it"
	}
	n, err := br.r.Read(p)
	if int64(n) > br.b.left {
		br.b.left = 0
		return 0, errTooLarge(br.b.limit)
	}
	br.b.left -= int64(n)
	br.n += int64(n)
	return n, err
}

type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("archive is larger than the limit of %d bytes (decompressed)", e.limit)
}

func errTooLarge(limit int64) error { return &tooLargeError{limit: limit} }

// truncated turns the EOF of a structure cut short into an error that says so.
func truncated(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("truncated %s", what)
	}
	return err
}
