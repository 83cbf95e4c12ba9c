package serve

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/origin"
)

// objectStore serves one file on 127.0.0.1 as an object store does (Range, If-Range, a
// strong ETag), counts the body bytes it sends, and can be made to fail.
type objectStore struct {
	srv  *httptest.Server
	sent atomic.Int64

	mu    sync.Mutex
	path  string
	etag  string
	query string // every request must carry it, as a pre-signed URL's
	// fail, when set, answers instead.
	fail http.HandlerFunc
}

func newObjectStore(t *testing.T, path string) *objectStore {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return newObjectStoreOn(t, path, ln)
}

// newObjectStoreOn is newObjectStore answering on ln.
func newObjectStoreOn(t *testing.T, path string, ln net.Listener) *objectStore {
	s := &objectStore{path: path, etag: `"object-v1"`, query: "X-Amz-Signature=TOPSECRET"}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// url is a pre-signed-looking URL: its query is a credential.
func (s *objectStore) url() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.URL + "/bucket/rhcos-live.iso?" + s.query
}

func (s *objectStore) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	path, etag, fail, query := s.path, s.etag, s.fail, s.query
	s.mu.Unlock()
	if fail != nil {
		fail(w, r)
		return
	}
	// The query is the credential of a pre-signed URL: every request must carry it.
	if r.URL.RawQuery != query {
		http.Error(w, "signature missing", http.StatusForbidden)
		return
	}
	serveObjectFile(&countingResponse{ResponseWriter: w, n: &s.sent}, r, path, etag, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
}

// serveObjectFile answers r from the file at path as the object's version etag, with ranges.
func serveObjectFile(w http.ResponseWriter, r *http.Request, path, etag string, modTime time.Time) {
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	defer f.Close()
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", modTime, f)
}

func (s *objectStore) set(path, etag string, fail http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.path, s.etag, s.fail = path, etag, fail
}

type countingResponse struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countingResponse) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

func originHarness(t *testing.T, store *objectStore, nodes map[string]string) *harness {
	return newHarness(t, store.path, nodes, func(c *testSetup) {
		c.ISO = store.url()
		c.Origin = origin.Options{IdleTimeout: 2 * time.Second}
	})
}

// The ISO by URL: the same bytes as from the file, from about one ISO's worth of origin
// reads per download, with validators every replica agrees on.
func TestISOFromOrigin(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	a := originHarness(t, store, map[string]string{"a": configA})
	b := originHarness(t, store, map[string]string{"a": configA})
	want := a.want(configA)

	before := store.sent.Load()
	resp, body := a.get("/a.iso")
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("GET /a.iso from the origin: %d, %d bytes that are not the built ISO", resp.StatusCode, len(body))
	}
	if read := store.sent.Load() - before; read > int64(len(want)) {
		t.Errorf("the origin sent %d bytes for one download of %d", read, len(want))
	}
	other, _ := b.get("/a.iso", "Range: bytes=0-99")
	for _, k := range []string{"ETag", "Last-Modified"} {
		if resp.Header.Get(k) == "" || other.Header.Get(k) != resp.Header.Get(k) {
			t.Errorf("%s: %q on one replica, %q on the other", k, resp.Header.Get(k), other.Header.Get(k))
		}
	}
	if lm := resp.Header.Get("Last-Modified"); lm == "Thu, 01 Oct 2026 00:00:00 GMT" {
		t.Errorf("Last-Modified %q is the origin's, not the ISO's own date", lm)
	}
	// A download resumed on the other replica.
	resumed, part := b.get("/a.iso", "Range: bytes=100000-", "If-Range: "+resp.Header.Get("ETag"))
	if resumed.StatusCode != 206 || !bytes.Equal(part, want[100000:]) {
		t.Errorf("resuming on another replica: %d, %d bytes", resumed.StatusCode, len(part))
	}
	mr, mbody := a.get("/a.iso", "Range: bytes=0-9,139000-140000,-5")
	checkMultipart(t, mr, mbody, want, [][2]int64{{0, 9}, {139000, 140000}, {int64(len(want)) - 5, int64(len(want)) - 1}})
	if index, page := a.get("/"); index.StatusCode != 200 || strings.Contains(string(page), "TOPSECRET") || !strings.Contains(string(page), "/bucket/rhcos-live.iso") {
		t.Errorf("the index page (%d) shows the URL's credentials or not the object:\n%s", index.StatusCode, page)
	}
	if rootfs, got := a.get("/rootfs.img"); rootfs.StatusCode != 200 || !bytes.Equal(got, a.pxeBytes("rootfs.img")) {
		t.Errorf("/rootfs.img from the origin: %d", rootfs.StatusCode)
	}
}

// Content-derived validators: two copies of one ISO with different modification times and
// paths give the same ETag and Last-Modified.
func TestValidatorsFromContent(t *testing.T) {
	src := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	var got [2][2]string
	for i := range got {
		path := filepath.Join(t.TempDir(), "copy.iso")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, time.Now(), time.Now().Add(time.Duration(i)*time.Hour))
		h := newHarness(t, path, map[string]string{"a": configA}, nil)
		resp, _ := h.get("/a.iso", "Range: bytes=0-0")
		got[i] = [2]string{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
	}
	if got[0] != got[1] || got[0][0] == "" {
		t.Errorf("copies of one ISO: %q and %q", got[0], got[1])
	}
}

// Origin failures are 502 or 504 with a log line that names the object without its
// credentials; a body the origin cuts short is never presented as complete.
func TestOriginFailures(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := originHarness(t, store, map[string]string{"a": configA})
	h.get("/a.iso", "Range: bytes=0-0") // prepares the node

	store.set(store.path, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal error", http.StatusInternalServerError)
	})
	resp, _ := h.get("/a.iso")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("ETag") != "" {
		t.Errorf("origin failing: %d with ETag %q, want 502 without", resp.StatusCode, resp.Header.Get("ETag"))
	}

	release := make(chan struct{})
	store.set(store.path, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	resp, _ = h.get("/a.iso")
	close(release)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("origin silent: %d, want 504", resp.StatusCode)
	}

	// The first span is promised and the origin dies in the middle of it.
	store.set(store.path, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"object-v1"`)
		if r.Header.Get("Range") == "bytes=0-139263" || strings.HasPrefix(r.Header.Get("Range"), "bytes=0-") {
			f, _ := os.Open(store.path)
			defer f.Close()
			rw := &cutResponse{ResponseWriter: w, left: 50_000}
			http.ServeContent(rw, r, "", time.Time{}, f)
			return
		}
		http.Error(w, "no", 500)
	})
	req, _ := http.NewRequest(http.MethodGet, h.url+h.path("/a.iso"), nil)
	full, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(full.Body)
	full.Body.Close()
	if err == nil || int64(len(got)) == full.ContentLength {
		t.Errorf("a download cut by the origin read %d of %d bytes without an error", len(got), full.ContentLength)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the client's error %v does not say the body ended early", err)
	}

	log := h.log.String()
	if strings.Contains(log, "TOPSECRET") {
		t.Errorf("the log shows the URL's credentials:\n%s", log)
	}
	for _, want := range []string{" 502 ", " 504 ", "origin " + store.srv.URL + "/bucket/rhcos-live.iso"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log has no %q:\n%s", want, log)
		}
	}
}

// cutResponse drops the connection after left body bytes, as a crashing origin does.
type cutResponse struct {
	http.ResponseWriter
	left int
}

func (w *cutResponse) Write(p []byte) (int, error) {
	if len(p) > w.left {
		w.ResponseWriter.Write(p[:w.left])
		panic(http.ErrAbortHandler)
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}

// An object replaced at the origin is noticed: the request that finds it, before it sent a
// byte, serves the new version with a new ETag, never a 502 nor bytes of both.
func TestOriginObjectReplaced(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := originHarness(t, store, map[string]string{"a": configA})
	first, _ := h.get("/a.iso")
	h.iso = fixtures.File(t, "embed-areas-2021-12.iso")
	store.set(h.iso, `"object-v2"`, nil)
	want := h.want(configA)
	resp, body := h.get("/a.iso")
	if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("ETag") == first.Header.Get("ETag") {
		t.Errorf("after the object changed: %d, ETag %s (was %s), new bytes: %v", resp.StatusCode, resp.Header.Get("ETag"), first.Header.Get("ETag"), bytes.Equal(body, want))
	}
	if !strings.Contains(h.log.String(), "changed at the origin: serving the new version") {
		t.Errorf("the log does not say the object changed:\n%s", h.log.String())
	}
}
