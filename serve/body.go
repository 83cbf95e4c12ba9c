package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/origin"
)

const (
	// sendfileMin is the span from which reopening the file for sendfile pays off; shorter
	// spans (a 1 KiB range read) are read through a pooled buffer.
	sendfileMin = 128 << 10
	// writeChunk bounds each write: the write deadline is renewed, and the source file
	// checked for a change, at least this often. A client that takes Config.WriteTimeout to
	// accept this much is cut off (at the default minute, 8.5 kB/s).
	writeChunk = 512 << 10
)

// ErrSourceChanged says that the file a response was being sent from was written while it
// was sent (an ISO edited in place): the response is aborted, never completed with mixed
// bytes under a strong ETag.
var ErrSourceChanged = errors.New("the file changed while being sent: the response was aborted, " +
	"and the next request is served from the new version")

// copyBufPool holds the buffers of short and non-sendfile copies; they never grow with
// the file.
var copyBufPool = sync.Pool{New: func() any { return new([sendfileMin]byte) }}

// bodyWriter writes an artifact's bytes to a response, one request's worth of state: the
// reopened file for sendfile and the write deadline.
type bodyWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration // for each chunk; see extendDeadline
	file    *sourceFile
	own     *os.File // this request's descriptor of ownFile; nil until a long span needs it
	ownFile *sourceFile
	// noSendfile is set once reopening failed (no /proc): copy through a buffer.
	noSendfile bool
	// ctx is the request's, for origin reads; pending is the origin's answer for the span
	// at pendingOff, opened before the response was promised.
	ctx        context.Context
	pending    *origin.Body
	pendingOff int64
	// follow is the copy under way this response reads from (see followed), held until close.
	follow *localCopy
}

func newBodyWriter(w http.ResponseWriter, file *sourceFile, timeout time.Duration) *bodyWriter {
	return &bodyWriter{w: w, rc: http.NewResponseController(w), timeout: timeout, file: file}
}

// close releases the request's descriptor.
func (bw *bodyWriter) close() {
	if bw.own != nil {
		bw.own.Close()
	}
	if bw.pending != nil {
		bw.pending.Close()
	}
	if bw.follow != nil {
		bw.follow.release()
	}
}

// extendDeadline gives the client the timeout for the next chunk: one that keeps reading
// keeps going, one that stops for that long is cut off and frees its place. Writers that
// cannot set deadlines (a test recorder) simply have none.
func (bw *bodyWriter) extendDeadline() {
	bw.rc.SetWriteDeadline(time.Now().Add(bw.timeout))
}

// checkSource reports ErrSourceChanged when the source file's size, modification or change
// time is no longer what it was when it was opened: an fstat per chunk, cheap next to it.
func (bw *bodyWriter) checkSource() error {
	if bw.file == nil || bw.file.info == nil {
		return nil
	}
	f, ok := bw.file.f.(*os.File)
	if !ok {
		return nil
	}
	now, err := f.Stat()
	if err != nil {
		return err
	}
	if !filestamp.SameVersion(now, bw.file.info) {
		return ErrSourceChanged
	}
	return nil
}

// writeRange writes bytes [off, off+n) of a.
func (bw *bodyWriter) writeRange(a *artifact, off, n int64) error {
	end := off + n
	for _, p := range a.parts {
		if p.start+p.size <= off || p.start >= end {
			continue
		}
		from, to := max(off, p.start)-p.start, min(end, p.start+p.size)-p.start
		if p.data != nil {
			if err := bw.write(p.data[from:to]); err != nil {
				return err
			}
			continue
		}
		if err := bw.copyFile(p.fileOff+from, to-from); err != nil {
			return err
		}
	}
	return nil
}

func (bw *bodyWriter) write(data []byte) error {
	for len(data) > 0 {
		chunk := data[:min(len(data), writeChunk)]
		if err := bw.checkSource(); err != nil {
			return err
		}
		bw.extendDeadline()
		if _, err := bw.w.Write(chunk); err != nil {
			return err
		}
		data = data[len(chunk):]
	}
	return nil
}

// copyFile writes n bytes of the source file at off.
func (bw *bodyWriter) copyFile(off, n int64) error {
	if obj, ok := bw.file.f.(*origin.Object); ok && n >= sendfileMin {
		return bw.copyOrigin(obj, off, n)
	}
	return bw.copyFrom(bw.file, off, n)
}

// copyFrom writes n bytes of file (the source file, or the local copy of an origin's) at off:
// by sendfile from this request's own descriptor when the span is long, else through a pooled
// buffer.
func (bw *bodyWriter) copyFrom(file *sourceFile, off, n int64) error {
	if n >= sendfileMin && bw.reopen(file) {
		// The span's last byte is read and sent after a last check: a change during the
		// sendfile is noticed while the response is still short of its Content-Length.
		if err := bw.sendfile(off, n-1); err != nil {
			return err
		}
		off, n = off+n-1, 1
	}
	buf := copyBufPool.Get().(*[sendfileMin]byte)
	defer copyBufPool.Put(buf)
	for n > 0 {
		chunk := buf[:min(n, int64(len(buf)))]
		got, err := file.f.ReadAt(chunk, off)
		if got < len(chunk) {
			return shortRead(off+int64(got), err)
		}
		// After the read: bytes read before a change are consistent, and a change before
		// or during it is seen here.
		if err := bw.checkSource(); err != nil {
			return err
		}
		bw.extendDeadline()
		if _, err := bw.w.Write(chunk); err != nil {
			return err
		}
		off += int64(got)
		n -= int64(got)
	}
	return nil
}

// sendfile copies through io.Copy with an *io.LimitedReader over an *os.File: net/http hands
// that to the TCP connection, which moves the bytes with sendfile(2).
func (bw *bodyWriter) sendfile(off, n int64) error {
	if _, err := bw.own.Seek(off, io.SeekStart); err != nil {
		return err
	}
	for n > 0 {
		chunk := min(n, writeChunk)
		if err := bw.checkSource(); err != nil {
			return err
		}
		bw.extendDeadline()
		copied, err := io.Copy(bw.w, &io.LimitedReader{R: bw.own, N: chunk})
		if err != nil {
			return err
		}
		if copied < chunk {
			return shortRead(off+copied, nil)
		}
		off += copied
		n -= copied
	}
	return nil
}

// reopen opens this request's own descriptor of file, once per file (a request following a
// copy may read a second one, when the first ended short and another took its place); false
// means copy through a buffer. The new descriptor must name the same file: a different one
// means the descriptor number was reused, and its bytes are not ours.
func (bw *bodyWriter) reopen(file *sourceFile) bool {
	if bw.own != nil && bw.ownFile == file {
		return true
	}
	if bw.own != nil {
		bw.own.Close()
		bw.own, bw.ownFile = nil, nil
	}
	if bw.noSendfile || file.procPath == "" {
		return false
	}
	f, err := os.Open(file.procPath)
	if err == nil {
		if info, serr := f.Stat(); serr == nil && os.SameFile(info, file.info) {
			bw.own, bw.ownFile = f, file
			return true
		}
		f.Close()
	}
	bw.noSendfile = true
	return false
}

func shortRead(off int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading the source at byte %d: %w (was the ISO truncated?)", off, err)
}
