package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// testBytes are n deterministic pseudo-random bytes standing in for a live ISO.
func testBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0] = seed
	rand.NewChaCha8(key).Read(b)
	return b
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// seen is what the origin recorded of one request.
type seen struct {
	Path, Range, IfRange string
}

// origin is a loopback HTTP server whose handler can inject faults per request. It fails the
// test beyond maxRequests requests, so that a retry loop cannot run away.
type origin struct {
	*httptest.Server
	t           *testing.T
	maxRequests int

	mu       sync.Mutex
	requests []seen
	// handle answers request number n (0-based); it is replaced by tests.
	handle func(n int, w http.ResponseWriter, r *http.Request)
}

func newOrigin(t *testing.T, maxRequests int, handle func(n int, w http.ResponseWriter, r *http.Request)) *origin {
	o := &origin{t: t, maxRequests: maxRequests, handle: handle}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		n := len(o.requests)
		o.requests = append(o.requests, seen{Path: r.URL.Path, Range: r.Header.Get("Range"), IfRange: r.Header.Get("If-Range")})
		o.mu.Unlock()
		if n >= o.maxRequests {
			t.Errorf("request %d to %s: more than the %d expected", n+1, r.URL.Path, o.maxRequests)
			http.Error(w, "too many requests in a test", http.StatusTeapot)
			return
		}
		o.handle(n, w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) seen() []seen {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]seen(nil), o.requests...)
}

// serveFile answers with data as a static file server does: ranges, If-Range, ETag.
func serveFile(w http.ResponseWriter, r *http.Request, data []byte, etag string) {
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// cutAt sends the headers of the whole of data and then only its first n bytes, and drops
// the connection: a connection reset mid-body.
func cutAt(w http.ResponseWriter, data []byte, n int, etag string) {
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data[:n])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// waitForClientToGo blocks a handler until its client drops the request, for at most 10 s.
func waitForClientToGo(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// quickFetcher is a Fetcher whose waits are milliseconds, so that faults cost no real time.
func quickFetcher(p Progress) *Fetcher {
	f := NewFetcher()
	f.Backoff, f.MaxBackoff, f.MaxRetryAfter = time.Millisecond, 4*time.Millisecond, 20*time.Millisecond
	f.StallTimeout = 200 * time.Millisecond
	f.Retries = 3
	f.Progress = p
	return f
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recorder is a Progress that keeps what it heard.
type recorder struct {
	mu      sync.Mutex
	starts  []string
	retries []string
	urls    []string // as Start and Retry were told them
	waits   []time.Duration
	onWait  func()
	onBytes func(have int64)
}

func (r *recorder) Start(url string, have, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, fmt.Sprintf("%d/%d", have, total))
	r.urls = append(r.urls, url)
}

func (r *recorder) Update(have int64) {
	r.mu.Lock()
	f := r.onBytes
	r.mu.Unlock()
	if f != nil {
		f(have)
	}
}

func (r *recorder) Retry(url string, err error, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, err.Error())
	r.urls = append(r.urls, url)
	r.waits = append(r.waits, wait)
}

func (r *recorder) Wait(string) {
	if r.onWait != nil {
		r.onWait()
	}
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (stat error %v), want nothing left behind", path, err)
	}
}

func mustHaveBytes(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || sha256Hex(got) != sha256Hex(want) {
		t.Fatalf("%s: %d bytes, sha256 %s; want %d bytes, sha256 %s", path, len(got), sha256Hex(got), len(want), sha256Hex(want))
	}
}
