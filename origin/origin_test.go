package origin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// testOrigin serves one object with Range, If-Range and ETag as an object store does, and
// counts the requests and body bytes it sent.
type testOrigin struct {
	mu       sync.Mutex
	data     []byte
	etag     string
	requests atomic.Int64
	sent     atomic.Int64
	srv      *httptest.Server
	// handler, when set, answers instead (a misbehaving origin).
	handler http.HandlerFunc
}

func newTestOrigin(t *testing.T, data []byte) *testOrigin {
	o := &testOrigin{data: data, etag: `"v1"`}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *testOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.requests.Add(1)
	if o.handler != nil {
		o.handler(w, r)
		return
	}
	o.mu.Lock()
	data, etag := o.data, o.etag
	o.mu.Unlock()
	w.Header().Set("ETag", etag)
	cw := &countingWriter{ResponseWriter: w, n: &o.sent}
	http.ServeContent(cw, r, "", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader(data))
}

func (o *testOrigin) replace(data []byte, etag string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.data, o.etag = data, etag
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

// Write counts before writing: the client may have the bytes before Write returns.
func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func smallOptions() Options {
	return Options{BlockSize: 4096, Blocks: 4, IdleTimeout: 5 * time.Second}
}

func TestReadAtThroughTheCache(t *testing.T) {
	data := randomBytes(100_000)
	o := newTestOrigin(t, data)
	var observed, observedBytes atomic.Int64
	opts := smallOptions()
	opts.Observe = func(n int64, err error) {
		observed.Add(1)
		observedBytes.Add(n)
		if err != nil {
			t.Errorf("observed error %v", err)
		}
	}
	obj, err := Open(context.Background(), o.srv.URL+"/rhcos.iso", opts)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Size() != int64(len(data)) || obj.ETag() != `"v1"` || obj.LastModified().IsZero() {
		t.Fatalf("size %d, ETag %q, Last-Modified %v", obj.Size(), obj.ETag(), obj.LastModified())
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		off := r.Int64N(int64(len(data)))
		buf := make([]byte, r.IntN(3*4096))
		n, err := obj.ReadAt(buf, off)
		want := data[off:min(off+int64(len(buf)), int64(len(data)))]
		if !bytes.Equal(buf[:n], want) {
			t.Fatalf("ReadAt(%d bytes, %d): %d bytes differ", len(buf), off, n)
		}
		if n < len(buf) && err != io.EOF {
			t.Fatalf("short read of %d at %d: %v, want io.EOF", n, off, err)
		}
		if n == len(buf) && err != nil {
			t.Fatalf("ReadAt at %d: %v", off, err)
		}
		if got := obj.cache.len(); got > opts.Blocks {
			t.Fatalf("%d blocks cached, at most %d allowed", got, opts.Blocks)
		}
	}
	// Reads of one block hit the origin once.
	before := o.requests.Load()
	for range 10 {
		buf := make([]byte, 10)
		obj.ReadAt(buf, 50_000)
	}
	if got := o.requests.Load() - before; got > 1 {
		t.Errorf("%d origin requests for 10 reads of one block", got)
	}
	// A long read is one request, not one per block.
	before = o.requests.Load()
	buf := make([]byte, 90_000)
	if _, err := obj.ReadAt(buf, 1); err != nil || !bytes.Equal(buf, data[1:90_001]) {
		t.Fatalf("long read: %v", err)
	}
	if got := o.requests.Load() - before; got != 1 {
		t.Errorf("%d origin requests for a long read, want 1", got)
	}
	if observed.Load() != o.requests.Load() || observedBytes.Load() != o.sent.Load() {
		t.Errorf("observed %d requests and %d bytes; the origin answered %d and sent %d", observed.Load(), observedBytes.Load(), o.requests.Load(), o.sent.Load())
	}
}

func TestRangeStreamsExactly(t *testing.T) {
	data := randomBytes(1 << 20)
	o := newTestOrigin(t, data)
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	sentBefore := o.sent.Load()
	body, err := obj.Range(context.Background(), 1000, 900_000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil || !bytes.Equal(got, data[1000:901_000]) {
		t.Fatalf("Range: %d bytes, %v", len(got), err)
	}
	if sent := o.sent.Load() - sentBefore; sent != 900_000 {
		t.Errorf("the origin sent %d bytes for a 900000-byte range", sent)
	}
	// CopyTo, in pieces, as serve sends a span to a client.
	body, err = obj.Range(context.Background(), 5, 700_000)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, piece := range []int64{1, 100_000, 599_999, 10} {
		n, err := body.CopyTo(&out, piece)
		if err != nil || n != min(piece, 700_000-int64(out.Len())+n) {
			t.Fatalf("CopyTo(%d): %d, %v", piece, n, err)
		}
	}
	body.Close()
	if !bytes.Equal(out.Bytes(), data[5:700_005]) {
		t.Errorf("CopyTo: %d bytes differ", out.Len())
	}
	if _, err := obj.Range(context.Background(), int64(len(data))-1, 2); err == nil {
		t.Error("a range past the end was accepted")
	}
}

// An origin that redirects (a store sending clients to its CDN) is followed for every read.
func TestRedirectedOrigin(t *testing.T) {
	data := randomBytes(300_000)
	o := newTestOrigin(t, data)
	redirect := httptest.NewServer(http.RedirectHandler(o.srv.URL+"/real.iso", http.StatusFound))
	defer redirect.Close()
	obj, err := Open(context.Background(), redirect.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	body, err := obj.Range(context.Background(), 10, 250_000)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = body.CopyTo(&out, 250_000)
	body.Close()
	if err != nil || !bytes.Equal(out.Bytes(), data[10:250_010]) {
		t.Errorf("Range through a redirect: %d bytes, %v", out.Len(), err)
	}
}

// An origin announcing more than the first block it was asked for is refused, not believed.
func TestOversizedFirstAnswer(t *testing.T) {
	o := newTestOrigin(t, randomBytes(10_000))
	o.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-999999999999/1000000000000")
		w.WriteHeader(http.StatusPartialContent)
	}
	if _, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions()); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("Open: %v, want ErrBadResponse", err)
	}
}

// Endless headers from the origin end the request, bounded.
func TestEndlessHeaders(t *testing.T) {
	o := newTestOrigin(t, randomBytes(300_000))
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Read the request: closing with it unread would reset the connection.
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		c.Write([]byte("HTTP/1.1 206 Partial Content\r\n"))
		line := []byte("X-Filler: " + strings.Repeat("x", 1000) + "\r\n")
		for range 3000 { // 3 MB of headers, more than allowed
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	}()
	obj.rawURL = "http://" + ln.Addr().String() + "/x.iso"
	if _, err := obj.Range(context.Background(), 0, 200_000); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("Range with endless headers: %v, want ErrBadResponse", err)
	}
}

func TestOriginWithoutRanges(t *testing.T) {
	o := newTestOrigin(t, randomBytes(10_000))
	o.handler = func(w http.ResponseWriter, r *http.Request) { w.Write(o.data) }
	_, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if !errors.Is(err, ErrNoRanges) {
		t.Fatalf("Open: %v, want ErrNoRanges", err)
	}
}

func TestReplacedObjectIsAnError(t *testing.T) {
	data := randomBytes(50_000)
	o := newTestOrigin(t, data)
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	o.replace(randomBytes(50_000)[1:], `"v2"`)
	buf := make([]byte, 100)
	if _, err := obj.ReadAt(buf, 20_000); !errors.Is(err, ErrChanged) {
		t.Fatalf("ReadAt after replacement: %v, want ErrChanged", err)
	}
	if _, err := obj.Range(context.Background(), 0, 30_000); !errors.Is(err, ErrChanged) {
		t.Fatalf("Range after replacement: %v, want ErrChanged", err)
	}
	if !obj.Changed() {
		t.Error("Changed() is false after the origin answered for another version")
	}
	// An origin that ignores If-Range still names the version in its ETag.
	obj2, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	o.replace(data, `"v3"`)
	o.handler = func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("If-Range")
		w.Header().Set("ETag", `"v3"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}
	if _, err := obj2.ReadAt(buf, 30_000); !errors.Is(err, ErrChanged) {
		t.Fatalf("ReadAt with a new ETag in the 206: %v, want ErrChanged", err)
	}
}

func TestTruncatedBodyIsAnError(t *testing.T) {
	data := randomBytes(200_000)
	o := newTestOrigin(t, data)
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The origin promises the range and dies half way through it.
	o.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Range", "bytes 0-149999/200000")
		w.Header().Set("Content-Length", "150000")
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[:70_000])
		panic(http.ErrAbortHandler)
	}
	body, err := obj.Range(context.Background(), 0, 150_000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err == nil || len(got) >= 150_000 {
		t.Fatalf("read %d bytes with error %v: a truncated body looked complete", len(got), err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v does not say the body ended early", err)
	}
	var oe *Error
	if !errors.As(err, &oe) || oe.Timeout() {
		t.Errorf("error %v: want an *Error that is not a timeout", err)
	}
	body, err = obj.Range(context.Background(), 0, 150_000)
	if err != nil {
		t.Fatal(err)
	}
	n, err := body.CopyTo(io.Discard, 150_000)
	body.Close()
	if n >= 150_000 || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.As(err, &oe) {
		t.Errorf("CopyTo of a truncated body: %d bytes, %v", n, err)
	}
}

func TestStalledOriginTimesOut(t *testing.T) {
	o := newTestOrigin(t, randomBytes(10_000))
	release := make(chan struct{})
	defer close(release)
	opts := smallOptions()
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", opts)
	if err != nil {
		t.Fatal(err)
	}
	obj.opts.IdleTimeout = 200 * time.Millisecond
	o.handler = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	start := time.Now()
	_, err = obj.Range(context.Background(), 5000, 100)
	var oe *Error
	if !errors.As(err, &oe) || !oe.Timeout() {
		t.Fatalf("Range from a silent origin: %v, want a timeout *Error", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("gave up after %v", time.Since(start))
	}
}

func TestCredentialsStayOutOfErrors(t *testing.T) {
	o := newTestOrigin(t, randomBytes(10_000))
	o.handler = func(w http.ResponseWriter, r *http.Request) { http.Error(w, "denied", http.StatusForbidden) }
	signed := o.srv.URL + "/bucket/rhcos.iso?X-Amz-Signature=SECRETSIG&X-Amz-Credential=AKIAEXAMPLE"
	_, err := Open(context.Background(), signed, smallOptions())
	var oe *Error
	if !errors.As(err, &oe) || oe.Status != http.StatusForbidden || !errors.Is(err, ErrStatus) {
		t.Fatalf("Open: %v, want a 403 *Error", err)
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "AKIA") {
		t.Errorf("the error shows the URL's credentials: %v", err)
	}
	if !strings.Contains(err.Error(), "/bucket/rhcos.iso") {
		t.Errorf("the error does not name the object: %v", err)
	}
	// Connection errors wrap a *url.Error that repeats the URL: it must go too.
	o.srv.Close()
	_, err = Open(context.Background(), signed, smallOptions())
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Open of a closed origin: %v", err)
	}
	if got := Redact("https://user:pw@s3.example:9000/b/k.iso?sig=1#f"); got != "https://s3.example:9000/b/k.iso" {
		t.Errorf("Redact: %q", got)
	}
}

// TestKnownRange: a 206 must name bytes of a known size; the header's syntax is httpsem's.
func TestKnownRange(t *testing.T) {
	good := map[string]httpsem.ContentRange{
		"bytes 0-0/1":         {First: 0, Last: 0, Size: 1},
		"bytes 5-1023/100000": {First: 5, Last: 1023, Size: 100000},
	}
	for s, want := range good {
		got, err := knownRange(http.Header{"Content-Range": {s}})
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "bytes */100", "bytes 0-9/*", "bytes 9-0/100", "bytes 0-100/100", "items 0-5/10"} {
		if cr, err := knownRange(http.Header{"Content-Range": {s}}); err == nil {
			t.Errorf("%q parsed as %+v", s, cr)
		}
	}
	if _, err := Open(context.Background(), "ftp://x/y", Options{}); !errors.Is(err, ErrNotHTTP) {
		t.Errorf("ftp URL: %v", err)
	}
}

// An origin that names no version (no strong ETag, no Last-Modified) cannot be pinned: a
// replaced object would be served as a mix of two versions. Open refuses it.
// TestReplacedObjectWithLastModifiedOnly: an origin that names versions by Last-Modified alone
// and ignores If-Range (as some simple servers do) answers a range of a new version with 206:
// its date, not the bytes' size, tells the versions apart.
func TestReplacedObjectWithLastModifiedOnly(t *testing.T) {
	v1, v2 := randomBytes(50_000), randomBytes(50_001)[1:]
	o := newTestOrigin(t, v1)
	serve := func(data []byte, modified time.Time) {
		o.handler = func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("If-Range")
			http.ServeContent(w, r, "", modified, bytes.NewReader(data))
		}
	}
	serve(v1, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	serve(v2, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	buf := make([]byte, 100)
	if _, err := obj.ReadAt(buf, 20_000); !errors.Is(err, ErrChanged) {
		t.Fatalf("ReadAt after replacement: %v (bytes of v2: %v), want ErrChanged", err, bytes.Equal(buf, v2[20_000:20_100]))
	}
	if !obj.Changed() {
		t.Error("Changed() is false after the origin answered with another Last-Modified")
	}
}

func TestOriginWithoutValidatorIsRefused(t *testing.T) {
	data := randomBytes(10_000)
	for name, etag := range map[string]string{"none": "", "weak ETag": `W/"v1"`} {
		t.Run(name, func(t *testing.T) {
			o := newTestOrigin(t, data)
			o.handler = func(w http.ResponseWriter, r *http.Request) {
				if etag != "" {
					w.Header().Set("ETag", etag)
				}
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
			}
			_, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
			if !errors.Is(err, ErrNoValidator) || !strings.Contains(err.Error(), "Last-Modified") {
				t.Fatalf("Open: %v, want ErrNoValidator naming what is missing", err)
			}
		})
	}
	// Last-Modified alone pins the version.
	o := newTestOrigin(t, data)
	o.handler = func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader(data))
	}
	if _, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions()); err != nil {
		t.Fatalf("Open with Last-Modified only: %v", err)
	}
}

// TestDroppedValidatorIsAChange: an origin that opened the object with a validator and later
// answers a range without it (ignoring If-Range, with another version's bytes) has changed
// the object: its bytes must not be mixed with the opened version's.
func TestDroppedValidatorIsAChange(t *testing.T) {
	v1, v2 := randomBytes(50_000), randomBytes(50_001)[1:]
	for name, opened := range map[string]func(http.ResponseWriter, *http.Request){
		"ETag": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v1"`)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(v1))
		},
		"Last-Modified": func(w http.ResponseWriter, r *http.Request) {
			http.ServeContent(w, r, "", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader(v1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := newTestOrigin(t, v1)
			o.handler = opened
			obj, err := Open(context.Background(), o.srv.URL+"/x.iso", smallOptions())
			if err != nil {
				t.Fatal(err)
			}
			o.handler = func(w http.ResponseWriter, r *http.Request) {
				r.Header.Del("If-Range")
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(v2))
			}
			buf := make([]byte, 100)
			if _, err := obj.ReadAt(buf, 20_000); !errors.Is(err, ErrChanged) {
				t.Fatalf("ReadAt of an answer without the %s: %v (bytes of v2: %v), want ErrChanged",
					name, err, bytes.Equal(buf, v2[20_000:20_100]))
			}
		})
	}
}
