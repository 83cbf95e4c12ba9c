package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/origin"
)

// holdCopy makes the copy's first request (the whole object) send hold bytes and wait for
// release; the copy's later requests get nothing until they end when stall is set, and are
// answered as the store's version is now otherwise, like every other request. It returns a
// channel closed once the first bytes are sent.
func holdCopy(store *copyStore, hold int, release chan struct{}, abort, stall bool) <-chan struct{} {
	held := make(chan struct{})
	var first atomic.Bool
	store.copySpan = func(w http.ResponseWriter, r *http.Request, path string) {
		store.objectStore.mu.Lock()
		etag := store.objectStore.etag
		store.objectStore.mu.Unlock()
		if r.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", fileLen(path)-1) || !first.CompareAndSwap(false, true) {
			if stall {
				<-r.Context().Done()
				return
			}
			serveObjectFile(w, r, path, etag, time.Time{})
			return
		}
		// The countingResponse under w counts what the client gets; flushing needs the server's.
		cw := w.(*countingResponse)
		cw.ResponseWriter = &gatedResponse{ResponseWriter: cw.ResponseWriter, left: hold, gate: release, stopped: held,
			ctx: r.Context(), abort: abort}
		serveObjectFile(cw, r, path, etag, time.Time{})
	}
	return held
}

// startDownload sends GET path and reads the first byte of its body: the response has begun,
// with its status and length promised.
func (h *harness) startDownload(path string, headers ...string) (*http.Response, []byte) {
	h.t.Helper()
	resp := h.send(http.MethodGet, h.path(path), headers...)
	h.t.Cleanup(func() { resp.Body.Close() })
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		h.t.Fatalf("GET %s: %d, reading its first byte: %v", path, resp.StatusCode, err)
	}
	return resp, first
}

// Downloads begun while the copy is under way follow it: each gets the exact ISO, and the
// store sends the object once (the copy's) plus the few blocks read to open it and prepare
// the node, not once more per download.
func TestOriginCopyFollowed(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	size := fileLen(iso)
	store := newCopyStore(t, iso)
	release := make(chan struct{})
	held := holdCopy(store, 256<<10, release, false, false)
	h := copyHarness(t, store, t.TempDir())
	h.waitReady()
	<-held
	want := h.want(configA)

	const downloads = 4
	resps, bodies := make([]*http.Response, downloads), make([][]byte, downloads)
	for i := range downloads {
		resps[i], bodies[i] = h.startDownload("/a.iso")
		if resps[i].StatusCode != 200 {
			t.Fatalf("download %d begun mid-copy: %d", i, resps[i].StatusCode)
		}
	}
	if h.srv.servingCopy() {
		t.Fatal("the copy took over before it was released")
	}
	close(release)
	var wg sync.WaitGroup
	errs := make([]error, downloads)
	for i := range downloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rest, err := io.ReadAll(resps[i].Body)
			bodies[i], errs[i] = append(bodies[i], rest...), err
		}()
	}
	wg.Wait()
	for i := range downloads {
		if errs[i] != nil || !bytes.Equal(bodies[i], want) {
			t.Errorf("download %d: %v, %d bytes, the built ISO: %v", i, errs[i], len(bodies[i]), bytes.Equal(bodies[i], want))
		}
	}
	h.waitLog("from the local copy")
	// 64 KiB blocks: the first, those the ISO's directories and the node's initramfs are read
	// from; the copy's one pass over the object.
	if sent, bound := store.sent.Load(), size+size/10+8*(64<<10); sent > bound {
		t.Errorf("the store sent %d bytes for a %d-byte object copied once and %d downloads begun mid-copy, want at most %d",
			sent, size, downloads, bound)
	}
}

// An object replaced at the store while the copy, and downloads following it, are under way:
// the copy ends, the downloads waiting for it ask the store for the rest, which is the new
// version, and fail: each sent a prefix of the old version's bytes, never a mix.
func TestOriginCopyFollowedReplaced(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	cut := make(chan struct{})
	held := holdCopy(store, 300_000, cut, true, false)
	h := copyHarness(t, store, t.TempDir())
	h.waitReady()
	<-held
	old := h.want(configA)

	const downloads = 2
	resps, bodies := make([]*http.Response, downloads), make([][]byte, downloads)
	for i := range downloads {
		resps[i], bodies[i] = h.startDownload("/a.iso")
	}
	store.replace(t, fixtures.File(t, "embed-areas-2021-12.iso"), `"object-v2"`)
	close(cut)
	h.waitLog("the object changed at its origin")
	for i := range downloads {
		rest, err := io.ReadAll(resps[i].Body)
		got := append(bodies[i], rest...)
		if err == nil || len(got) >= len(old) || !bytes.Equal(got, old[:len(got)]) {
			t.Errorf("download %d across the change: %v, %d of %d bytes, a prefix of the old version: %v", i, err, len(got), len(old),
				bytes.Equal(got, old[:min(len(got), len(old))]))
		}
		resps[i].Body.Close()
	}
	// The next request opens the new version, which is copied in turn: the old version's
	// copy, held open while its downloads read it, is closed once they ended.
	if resp, _ := h.get("/a.iso"); resp.StatusCode != 200 {
		t.Errorf("GET /a.iso after the change: %d", resp.StatusCode)
	}
	waitOpenCopies(t, h.srv.cfg.ISOCopyDir, 1)
}

// A copy that stalls for longer than the origin's idle timeout: a download waiting for it
// asks the store for the rest, and completes, instead of hanging with the copy.
func TestOriginCopyFollowedStalls(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	held := holdCopy(store, 300_000, nil, false, true) // the copy gets no more
	h := newHarness(t, store.path, map[string]string{"a": configA}, func(c *testSetup) {
		c.ISO = store.url()
		c.ISOCopyDir = t.TempDir()
		c.Origin = origin.Options{IdleTimeout: time.Second, BlockSize: 64 << 10}
	})
	h.waitReady()
	<-held
	want := h.want(configA)
	h.get("/a.iso", "Range: bytes=0-0") // prepares the node
	for deadline := time.Now().Add(30 * time.Second); h.metric(t, "sno_iso_origin_copy_bytes") < 300_000; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the copy never wrote the bytes the store sent")
		}
	}

	// The range ends before the object's last span: the store tells its requests from the copy's.
	before := store.sent.Load()
	resp, first := h.startDownload("/a.iso", "Range: bytes=0-699999")
	rest, err := io.ReadAll(resp.Body)
	got := append(first, rest...)
	if resp.StatusCode != 206 || err != nil || !bytes.Equal(got, want[:700_000]) {
		t.Fatalf("a download past a stalled copy: %d, %v, %d bytes, the built ISO's: %v", resp.StatusCode, err, len(got),
			bytes.Equal(got, want[:min(len(got), 700_000)]))
	}
	// The store sends no more than the range's bytes past the copy's: none of those copied.
	if sent := store.sent.Load() - before; sent == 0 || sent > 700_000-300_000 {
		t.Errorf("the store sent %d bytes for a 700000-byte range whose first 300000 bytes were copied", sent)
	}
}
