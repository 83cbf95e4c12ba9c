// Package origin reads one large object (a live ISO) from an HTTP server that answers Range
// requests, or from an S3 bucket (s3://BUCKET/KEY, signed requests with the AWS SDK's
// credential chain), without downloading it: small reads go through a bounded cache of
// blocks, long spans stream from one Range GET each. Every request names the version that was
// opened (If-Range over HTTP, If-Match on S3, and the ETag is checked in the answer), so an
// object replaced at the origin is an error, never a mix of two versions. The two transports
// differ only in how a Range GET is sent; every rule about its answer is shared.
package origin

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
	"github.com/sno-iso/sno-iso/internal/redact"
)

// Defaults of Options.
const (
	DefaultBlockSize = 1 << 20
	DefaultBlocks    = 32
	// DefaultIdleTimeout is how long a request may wait for the origin's next bytes.
	DefaultIdleTimeout = 30 * time.Second
)

// Options tune an Object. The zero value is usable.
type Options struct {
	// Client sends the requests to an http(s) origin; nil uses a client whose transport gives
	// up on an origin that does not answer within IdleTimeout.
	Client *http.Client
	// RootCAs verifies the origin's TLS certificate (https, and an S3 endpoint); nil uses the
	// system's roots.
	RootCAs *x509.CertPool
	// S3 locates and reaches s3:// objects.
	S3 S3Options
	// BlockSize and Blocks bound the cache of small reads: at most Blocks*BlockSize bytes.
	BlockSize int64
	Blocks    int
	// IdleTimeout bounds the wait for a response and between body reads; see Idle.
	IdleTimeout time.Duration
	// Observe, when set, is told of every request to the origin once it is over: the body
	// bytes read and the error that ended it (nil when it succeeded).
	Observe func(bytes int64, err error)
}

// Idle is the IdleTimeout in effect: DefaultIdleTimeout unless IdleTimeout is positive.
func (opts Options) Idle() time.Duration {
	if opts.IdleTimeout <= 0 {
		return DefaultIdleTimeout
	}
	return opts.IdleTimeout
}

// Object is one version of an object at an origin URL. It is safe for concurrent use.
type Object struct {
	display string // scheme://host/path or s3://bucket/key, what errors and logs name
	opts    Options
	// rawURL has its query: a pre-signed URL's credentials. The client of an s3:// URL sends
	// its requests to S3 (see S3RoundTripper).
	rawURL string
	client *http.Client
	s3     bool

	size         int64
	etag         string // strong, quoted; "" when the origin sent none
	lastModified time.Time
	sha256       string // the x-amz-meta-sha256 metadata, lower-case hex; "" without it
	ifRange      string // what If-Range sends: the ETag, else the Last-Modified date

	cache   *blockCache
	changed atomic.Bool
	// direct sends Range requests on connections of their own (see getDirect).
	direct bool
}

// Open asks the origin for the first block of the object at rawURL (http://, https:// or
// s3://BUCKET/KEY) and keeps what the answer tells of it: its size and validators. The origin
// must answer Range requests.
func Open(ctx context.Context, rawURL string, opts Options) (*Object, error) {
	if opts.BlockSize <= 0 {
		opts.BlockSize = DefaultBlockSize
	}
	if opts.Blocks <= 0 {
		opts.Blocks = DefaultBlocks
	}
	opts.IdleTimeout = opts.Idle()
	o := &Object{display: Redact(rawURL), opts: opts, cache: newBlockCache(opts.Blocks)}
	if IsS3(rawURL) {
		o.display = rawURL // bucket and key: nothing secret
		if err := o.openS3(ctx, rawURL); err != nil {
			return nil, err
		}
	} else {
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &Error{URL: o.display, Err: ErrNotHTTP}
		}
		o.rawURL, o.client = rawURL, opts.Client
		if o.client == nil {
			o.client = &http.Client{Transport: newTransport(opts.IdleTimeout, opts.RootCAs)}
			o.direct = directEligible(u)
		}
	}
	first, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	// An origin may answer with fewer bytes than asked: cache only a whole block.
	if int64(len(first)) == min(opts.BlockSize, o.size) {
		o.cache.put(0, first)
	}
	return o, nil
}

func newTransport(idle time.Duration, roots *x509.CertPool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	t.ResponseHeaderTimeout = idle
	t.DialContext = (&net.Dialer{Timeout: idle, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 64
	return t
}

// open reads the first block and learns the object's size and validators from the answer.
func (o *Object) open(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, o.opts.IdleTimeout)
	defer cancel()
	resp, err := o.get(ctx, 0, o.opts.BlockSize, false)
	if err != nil {
		return nil, o.fail(0, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil, o.fail(0, &Error{URL: o.display, Status: resp.StatusCode, Err: ErrNoRanges})
	}
	if resp.StatusCode != http.StatusPartialContent {
		return nil, o.fail(0, o.statusError(resp))
	}
	cr, err := knownRange(resp.Header)
	// More than asked for would be allocated as it is announced: refuse it.
	if err != nil || cr.First != 0 || cr.Last >= o.opts.BlockSize {
		return nil, o.fail(0, &Error{URL: o.display, Status: resp.StatusCode,
			Err: fmt.Errorf("%w: Content-Range %q for bytes 0-%d", ErrBadResponse, resp.Header.Get("Content-Range"), o.opts.BlockSize-1)})
	}
	o.size = cr.Size
	if o.direct && resp.Request.URL.String() != o.rawURL {
		// Redirected (to a CDN, a signed location): getDirect does not follow redirects.
		o.direct = false
	}
	if etag := resp.Header.Get("ETag"); httpsem.IsStrong(etag) {
		o.etag = etag
	}
	o.ifRange = httpsem.RangeValidator(resp.Header)
	if sum := strings.ToLower(resp.Header.Get(SHA256Header)); isSHA256(sum) {
		o.sha256 = sum
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		o.lastModified = t.UTC()
	}
	if o.ifRange == "" {
		return nil, &Error{URL: o.display, Status: resp.StatusCode, Err: ErrNoValidator}
	}
	data := make([]byte, cr.Last+1)
	n, err := io.ReadFull(resp.Body, data)
	o.observe(int64(n), err)
	if err != nil {
		return nil, &Error{URL: o.display, Err: fmt.Errorf("reading bytes 0-%d: %w", cr.Last, unexpectedEOF(err))}
	}
	return data, nil
}

// Size is the object's length in bytes.
func (o *Object) Size() int64 { return o.size }

// ETag is the origin's strong entity tag of the object, quoted; "" when it sent none.
func (o *Object) ETag() string { return o.etag }

// SHA256 is the sha256 of the object's bytes that its x-amz-meta-sha256 metadata records
// (see DigestReader), in lower-case hex; "" when it has none.
func (o *Object) SHA256() string { return o.sha256 }

// LastModified is the origin's Last-Modified date; zero when it sent none.
func (o *Object) LastModified() time.Time { return o.lastModified }

// String names the object without the URL's query, which may hold credentials.
func (o *Object) String() string { return o.display }

// Changed reports whether a request found that the object at the origin is no longer the
// version that was opened: this Object cannot read it, Open it again.
func (o *Object) Changed() bool { return o.changed.Load() }

// Check asks the origin for the first byte of the opened version, past the cache: nil when
// it answers with it, else the *Error of the request (Changed then reports a new version).
func (o *Object) Check(ctx context.Context) error {
	body, err := o.Range(ctx, 0, 1)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.ReadFull(body, make([]byte, 1))
	return err
}

// ReadAt reads len(p) bytes at off: through the block cache for small reads, with one
// request to the origin for reads longer than a few blocks.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("origin: negative offset %d", off)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), o.size-off)
	var err error
	if want > 4*o.opts.BlockSize {
		err = o.readDirect(p[:want], off)
	} else {
		err = o.readCached(p[:want], off)
	}
	if err != nil {
		return 0, err
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}

func (o *Object) readCached(p []byte, off int64) error {
	for len(p) > 0 {
		idx := off / o.opts.BlockSize
		data, err := o.cache.get(idx, o.fetchBlock)
		if err != nil {
			return err
		}
		n := copy(p, data[off-idx*o.opts.BlockSize:])
		p, off = p[n:], off+int64(n)
	}
	return nil
}

func (o *Object) fetchBlock(idx int64) ([]byte, error) {
	off := idx * o.opts.BlockSize
	data := make([]byte, min(o.opts.BlockSize, o.size-off))
	return data, o.readDirect(data, off)
}

func (o *Object) readDirect(p []byte, off int64) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body, err := o.rangeBody(ctx, cancel, off, int64(len(p)))
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.ReadFull(body, p)
	return err
}

// Range returns the n bytes at off as they arrive from the origin; the request was answered
// with exactly those bytes of this version when Range returns. A body that ends early or
// stalls is a read error, never a short success.
func (o *Object) Range(ctx context.Context, off, n int64) (*Body, error) {
	if off < 0 || n <= 0 || off+n > o.size {
		return nil, fmt.Errorf("origin: bytes %d-%d are outside the %d-byte object", off, off+n-1, o.size)
	}
	ctx, cancel := context.WithCancel(ctx)
	body, err := o.rangeBody(ctx, cancel, off, n)
	if err != nil {
		cancel()
		return nil, err
	}
	return body, nil
}

func (o *Object) rangeBody(ctx context.Context, cancel context.CancelFunc, off, n int64) (*Body, error) {
	// The request gets IdleTimeout to answer and then IdleTimeout between reads.
	watchdog := time.AfterFunc(o.opts.IdleTimeout, cancel)
	b := &Body{o: o, left: n, off: off, watchdog: watchdog, cancel: cancel, idle: o.opts.IdleTimeout}
	var resp *http.Response
	var err error
	if o.direct {
		resp, b.conn, b.buffered, err = o.getDirect(ctx, off, n)
	} else {
		resp, err = o.get(ctx, off, n, true)
	}
	if err == nil {
		if err = o.checkRange(resp, off, n); err == nil && b.conn != nil && (resp.ContentLength != n || len(resp.TransferEncoding) > 0) {
			err = &Error{URL: o.display, Status: resp.StatusCode,
				Err: fmt.Errorf("%w: %d body bytes framed %v for a %d-byte range", ErrBadResponse, resp.ContentLength, resp.TransferEncoding, n)}
		}
		if err != nil && b.conn == nil {
			resp.Body.Close()
		}
	}
	if err != nil {
		watchdog.Stop()
		if b.conn != nil {
			b.conn.Close()
		}
		return nil, o.fail(0, err)
	}
	b.rc = resp.Body
	if b.conn != nil {
		// The body is what the response reader buffered, then the rest of the connection.
		// Closing resp.Body would read to its end: close the connection instead.
		b.rc = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(b.buffered, int64(b.buffered.Buffered())), b.conn), b.conn}
	}
	return b, nil
}

// checkRange accepts only a 206 with exactly the bytes asked for, of the opened version.
func (o *Object) checkRange(resp *http.Response, off, n int64) error {
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK, http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable:
		// If-Range sends the whole (new) object when the version changed; 416: it shrank.
		return o.changedError(fmt.Sprintf("status %d for a range of the opened version", resp.StatusCode))
	default:
		return o.statusError(resp)
	}
	// The validator the object was opened with names the version: an answer without it (an
	// origin that dropped it while ignoring If-Range) is of an unknown version, not the opened one.
	if o.etag != "" {
		if etag := resp.Header.Get("ETag"); !httpsem.StrongMatch(etag, o.etag) {
			return o.changedError(fmt.Sprintf("ETag %s, opened as %s", orNone(etag), o.etag))
		}
	} else if !o.lastModified.IsZero() {
		// Without an ETag the version is its Last-Modified date: an origin that ignores
		// If-Range still names a new version there.
		header := resp.Header.Get("Last-Modified")
		if lm, err := http.ParseTime(header); err != nil || !lm.Equal(o.lastModified) {
			return o.changedError(fmt.Sprintf("Last-Modified %s, opened as %s", orNone(header), o.lastModified.Format(http.TimeFormat)))
		}
	}
	cr, err := knownRange(resp.Header)
	if err != nil {
		return &Error{URL: o.display, Status: resp.StatusCode, Err: fmt.Errorf("%w: %v", ErrBadResponse, err)}
	}
	if cr.Size != o.size {
		return o.changedError(fmt.Sprintf("size %d, opened with %d bytes", cr.Size, o.size))
	}
	if cr.First != off || cr.Last != off+n-1 {
		return &Error{URL: o.display, Status: resp.StatusCode,
			Err: fmt.Errorf("%w: Content-Range %q for bytes %d-%d", ErrBadResponse, resp.Header.Get("Content-Range"), off, off+n-1)}
	}
	return nil
}

func (o *Object) changedError(why string) error {
	o.changed.Store(true)
	return &Error{URL: o.display, Err: fmt.Errorf("%w (%s)", ErrChanged, why)}
}

func (o *Object) statusError(resp *http.Response) error {
	if o.s3 {
		return o.s3StatusError(resp)
	}
	return &Error{URL: o.display, Status: resp.StatusCode, Err: fmt.Errorf("%w: %s", ErrStatus, resp.Status)}
}

// get sends a GET for n bytes at off; conditional asks for the opened version only.
func (o *Object) get(ctx context.Context, off, n int64, conditional bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.rawURL, nil)
	if err != nil {
		return nil, &Error{URL: o.display, Err: err}
	}
	req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10))
	switch {
	case conditional && o.s3 && o.etag != "":
		// A failed If-Match is a 412; S3's stand-in for If-Range would fetch the whole new
		// object only to find it changed.
		req.Header.Set("If-Match", o.etag)
	case conditional && o.ifRange != "":
		req.Header.Set("If-Range", o.ifRange)
	}
	// A compressed answer would not be the bytes at those offsets.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, &Error{URL: o.display, Err: transportError(err)}
	}
	return resp, nil
}

// fail reports a failed request to Observe and returns err.
func (o *Object) fail(n int64, err error) error {
	o.observe(n, err)
	return err
}

func (o *Object) observe(n int64, err error) {
	if o.opts.Observe != nil {
		o.opts.Observe(n, err)
	}
}

// Body is a Range answer's body: exactly the bytes asked for, each read renewing the
// watchdog that cancels a stalled request. Close it.
type Body struct {
	o  *Object
	rc io.ReadCloser
	// conn is the connection of a request sent without net/http's client (see getDirect),
	// and buffered what its response reader read ahead.
	conn     *net.TCPConn
	buffered *bufio.Reader
	off      int64 // of the next byte
	left     int64
	read     int64
	watchdog *time.Timer
	cancel   context.CancelFunc
	idle     time.Duration
	err      error
}

func (b *Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	b.watchdog.Reset(b.idle)
	if b.conn != nil {
		b.conn.SetReadDeadline(time.Now().Add(b.idle))
	}
	n, err := b.rc.Read(p)
	b.off, b.left, b.read = b.off+int64(n), b.left-int64(n), b.read+int64(n)
	if b.left == 0 {
		return n, nil
	}
	if err != nil {
		b.err = &Error{URL: b.o.display, Err: fmt.Errorf("reading byte %d: %w", b.off, transportError(unexpectedEOF(err)))}
		return n, b.err
	}
	return n, nil
}

func (b *Body) Close() error {
	b.watchdog.Stop()
	b.cancel()
	b.o.observe(b.read, b.err)
	return b.rc.Close()
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// transportError drops the *url.Error around err: it repeats the whole URL, query included.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Redact returns scheme://host/path of rawURL: the query and user info of a pre-signed or
// authenticated URL are credentials, not for logs.
func Redact(rawURL string) string { return redact.URL(rawURL) }

// knownRange reads the Content-Range of a 206: bytes of an object whose size is known.
func knownRange(h http.Header) (httpsem.ContentRange, error) {
	cr, err := httpsem.ParseContentRange(h.Get("Content-Range"))
	if err == nil && (!cr.Satisfied() || cr.Size < 0) {
		err = fmt.Errorf("Content-Range %q of a 206 does not name bytes of a known size", h.Get("Content-Range"))
	}
	return cr, err
}

// orNone is a response header's value for an error, "none" when it is missing.
func orNone(header string) string {
	if header == "" {
		return "none"
	}
	return header
}
