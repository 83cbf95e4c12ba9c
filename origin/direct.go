package origin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// directEligible reports whether Range streams may bypass net/http's client: a plain http
// origin reached without a proxy. Its body is then read from the connection itself, which
// lets the kernel splice it into a client's connection (see CopyTo) instead of copying every
// byte through user space twice.
func directEligible(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u})
	return err == nil && proxy == nil
}

// getDirect sends the Range request on a connection of its own, closed after the answer.
func (o *Object) getDirect(ctx context.Context, off, n int64) (*http.Response, *net.TCPConn, *bufio.Reader, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.rawURL, nil)
	if err != nil {
		return nil, nil, nil, &Error{URL: o.display, Err: err}
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	if o.ifRange != "" {
		req.Header.Set("If-Range", o.ifRange)
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Close = true
	host := req.URL.Host
	if req.URL.Port() == "" {
		host = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	c, err := (&net.Dialer{Timeout: o.opts.IdleTimeout}).DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, nil, &Error{URL: o.display, Err: transportError(err)}
	}
	conn := c.(*net.TCPConn)
	// A cancelled request (the client went away, or the watchdog) ends the connection.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(o.opts.IdleTimeout))
	head := &headLimit{r: conn, left: maxHead}
	br := bufio.NewReaderSize(head, 64<<10)
	resp, err := writeAndRead(req, conn, br)
	head.left = -1
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, nil, nil, &Error{URL: o.display, Err: err}
	}
	conn.SetWriteDeadline(time.Time{})
	return resp, conn, br, nil
}

func writeAndRead(req *http.Request, conn net.Conn, br *bufio.Reader) (*http.Response, error) {
	if err := req.Write(conn); err != nil {
		return nil, err
	}
	return http.ReadResponse(br, req)
}

// maxHead bounds the status line and headers of an answer, as net/http's client does.
const maxHead = 1 << 20

// headLimit fails reads past left bytes while left is not negative: an origin cannot make
// the response reader buffer endless headers.
type headLimit struct {
	r    io.Reader
	left int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, fmt.Errorf("%w: the answer's headers exceed %d bytes", ErrBadResponse, maxHead)
	}
	n, err := h.r.Read(p[:min(int64(len(p)), h.left)])
	h.left -= int64(n)
	return n, err
}

// copyBufPool holds the buffers of copies that cannot be spliced.
var copyBufPool = sync.Pool{New: func() any { return new([128 << 10]byte) }}

// writerOnly hides a writer's ReadFrom, which would copy through a small buffer of its own.
type writerOnly struct{ io.Writer }

// CopyTo copies the next n bytes of a Range stream to w. From a direct connection the
// bytes go by splice(2) when w ends in a TCP connection (an http.ResponseWriter does);
// otherwise through a pooled 128 KiB buffer. The origin gets IdleTimeout to send them
// (IdleTimeout per read through the buffer).
func (b *Body) CopyTo(w io.Writer, n int64) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	n = min(n, b.left)
	var total int64
	for total < n {
		b.watchdog.Reset(b.idle)
		var copied int64
		var err error
		var readDeadline time.Time
		if b.conn != nil && b.buffered.Buffered() == 0 {
			readDeadline = time.Now().Add(b.idle)
			b.conn.SetReadDeadline(readDeadline)
			copied, err = io.Copy(w, &io.LimitedReader{R: b.conn, N: n - total})
		} else {
			chunk := n - total
			if b.conn != nil {
				chunk = min(chunk, int64(b.buffered.Buffered()))
			}
			buf := copyBufPool.Get().(*[128 << 10]byte)
			copied, err = io.CopyBuffer(writerOnly{w}, io.LimitReader(readerOnly{b}, chunk), buf[:])
			copyBufPool.Put(buf)
			if b.conn == nil {
				// Read already kept the count and made the error an *Error.
				return copied, err
			}
		}
		b.off, b.left, b.read, total = b.off+copied, b.left-copied, b.read+copied, total+copied
		if err == nil && copied == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			if isReadSide(err, readDeadline) {
				b.err = &Error{URL: b.o.display, Err: fmt.Errorf("reading byte %d: %w", b.off, unexpectedEOF(err))}
				return total, b.err
			}
			return total, err
		}
	}
	return total, nil
}

// readerOnly hides body's CopyTo from io.Copy's helpers, and counts through Read.
type readerOnly struct{ b *Body }

func (r readerOnly) Read(p []byte) (int, error) {
	if r.b.conn != nil {
		// Only the buffered bytes go this way; the count is kept by CopyTo.
		return r.b.buffered.Read(p)
	}
	return r.b.Read(p)
}

// isReadSide reports whether a copy from the origin's connection failed on the origin's
// side: it ended early, or went silent past its read deadline. Other errors (a client that
// went away or stalled past its write deadline) are the client's.
func isReadSide(err error, readDeadline time.Time) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return !readDeadline.IsZero() && !time.Now().Before(readDeadline)
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
