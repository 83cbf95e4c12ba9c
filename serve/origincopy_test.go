package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/origin"
)

// copyStore is an objectStore whose answers the test shapes: the x-amz-meta-sha256 it
// records, and what the copy's Range requests (the whole object, conditional) get.
type copyStore struct {
	*objectStore
	mu     sync.Mutex
	sha256 string
	// copySpan, when set, answers the copy's requests instead, told the object's file.
	copySpan func(w http.ResponseWriter, r *http.Request, path string)
	// copyRanges are the Range headers of the copy's requests, in order.
	copyRanges []string
	// hold, when set, stops the next answer that is not the copy's after its first byte,
	// until its gate is closed.
	hold atomic.Pointer[gatedResponse]
}

// newCopyStore serves iso as version "object-v1", with its true sha256 as metadata.
func newCopyStore(t *testing.T, iso string) *copyStore {
	c := &copyStore{objectStore: newObjectStore(t, iso), sha256: fileSHA256(t, iso)}
	c.objectStore.set(iso, `"object-v1"`, c.answer)
	return c
}

func (c *copyStore) answer(w http.ResponseWriter, r *http.Request) {
	c.objectStore.mu.Lock()
	path, etag := c.objectStore.path, c.objectStore.etag
	c.objectStore.mu.Unlock()
	c.mu.Lock()
	sum, span := c.sha256, c.copySpan
	// The copy asks for the rest of this small object, with the version's validator; the
	// block cache and downloads ask for less, or for spans other than the copy's.
	var first, last int64
	_, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
	isCopy := err == nil && r.Header.Get("If-Range") != "" && last == fileLen(path)-1 && last-first+1 >= copyMinSpan
	if isCopy {
		c.copyRanges = append(c.copyRanges, r.Header.Get("Range"))
	}
	c.mu.Unlock()
	if sum != "" {
		w.Header().Set(origin.SHA256Header, sum)
	}
	w.Header().Set("ETag", etag)
	if isCopy && span != nil {
		span(&countingResponse{ResponseWriter: w, n: &c.sent}, r, path)
		return
	}
	if gw := c.hold.Load(); !isCopy && gw != nil && c.hold.CompareAndSwap(gw, nil) {
		gw.ResponseWriter = w
		w = gw
	}
	serveObjectFile(&countingResponse{ResponseWriter: w, n: &c.sent}, r, path, etag, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
}

// replace puts another ISO at the object's key as version etag, with its sha256.
func (c *copyStore) replace(t *testing.T, iso, etag string) {
	c.mu.Lock()
	c.sha256 = fileSHA256(t, iso)
	c.mu.Unlock()
	c.objectStore.set(iso, etag, c.answer)
}

func (c *copyStore) ranges() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.copyRanges...)
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func fileLen(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return info.Size()
}

// copyMinSpan is the least the test's copies ask for at once (most of the object).
const copyMinSpan = 200_000

// copyHarness serves the store's object, copying it to dir; blocks of 64 KiB keep the block
// cache's reads apart from the copy's.
func copyHarness(t *testing.T, store *copyStore, dir string) *harness {
	return newHarness(t, store.path, map[string]string{"a": configA}, func(c *testSetup) {
		c.ISO = store.url()
		c.ISOCopyDir = dir
		c.Origin = origin.Options{IdleTimeout: 5 * time.Second, BlockSize: 64 << 10}
	})
}

// waitLog waits for the server's log to say want, failing the test after a bound.
func (h *harness) waitLog(want string) {
	h.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(h.log.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the log never said %q:\n%s", want, h.log.String())
		}
	}
}

// metric is the value of series in the server's /metrics.
func (h *harness) metric(t *testing.T, series string) float64 {
	h.t.Helper()
	_, body := h.get(MetricsPath)
	return metricValue(t, string(body), series)
}

// The copy takes over once complete: downloads then read nothing from the origin, and carry
// the same bytes, ETag and Last-Modified as those served from the origin before it.
func TestOriginCopyServes(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := newCopyStore(t, iso)
	release, asked := make(chan struct{}), make(chan struct{}, 8)
	store.copySpan = func(w http.ResponseWriter, r *http.Request, path string) {
		if r.Header.Get("Range") != "bytes=0-1048575" { // a download's last span
			serveObjectFile(w, r, path, `"object-v1"`, time.Time{})
			return
		}
		asked <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		serveObjectFile(w, r, path, `"object-v1"`, time.Time{})
	}
	h := copyHarness(t, store, t.TempDir())
	h.waitReady()
	<-asked // the copy waits for the origin: what follows is served from the origin

	fromOrigin, want := map[string]*http.Response{}, map[string][]byte{}
	paths := []string{"/a.iso", "/a/vmlinuz", "/rootfs.img"}
	for _, p := range paths {
		before := store.sent.Load()
		fromOrigin[p], want[p] = h.get(p)
		// The small files of the fixture may come from the block cache; /a.iso cannot.
		if fromOrigin[p].StatusCode != 200 || (p == "/a.iso" && store.sent.Load() == before) {
			t.Fatalf("GET %s before the copy: %d, %d bytes from the origin", p, fromOrigin[p].StatusCode, store.sent.Load()-before)
		}
	}
	if !bytes.Equal(want["/a.iso"], h.want(configA)) {
		t.Fatal("/a.iso from the origin is not the built ISO")
	}
	if got := h.metric(t, "sno_iso_origin_copy_complete"); got != 0 {
		t.Errorf("sno_iso_origin_copy_complete %v while the copy waits, want 0", got)
	}

	// A download from the origin under way when the copy takes over ends whole, from the origin.
	held := &gatedResponse{left: 1, gate: make(chan struct{}), stopped: make(chan struct{})}
	store.hold.Store(held)
	inFlight := make(chan []byte)
	go func() {
		resp, err := http.Get(h.url + h.path("/a.iso"))
		if err != nil {
			inFlight <- nil
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		inFlight <- body
	}()
	<-held.stopped

	close(release)
	h.waitLog("from the local copy: 1048576 bytes in ")
	close(held.gate)
	if body := <-inFlight; !bytes.Equal(body, want["/a.iso"]) {
		t.Errorf("the download under way when the copy took over: %d bytes, the whole ISO: %v", len(body), bytes.Equal(body, want["/a.iso"]))
	}
	if got := h.metric(t, "sno_iso_origin_copy_complete"); got != 1 {
		t.Errorf("sno_iso_origin_copy_complete %v once copied, want 1", got)
	}
	if got := h.metric(t, "sno_iso_origin_copy_bytes"); got != float64(fileLen(iso)) {
		t.Errorf("sno_iso_origin_copy_bytes %v, want %d", got, fileLen(iso))
	}
	before, originBytes := store.sent.Load(), h.metric(t, "sno_iso_origin_bytes_total")
	for range 2 {
		for _, p := range paths {
			resp, body := h.get(p)
			if resp.StatusCode != 200 || !bytes.Equal(body, want[p]) {
				t.Errorf("GET %s from the copy: %d, the same bytes as from the origin: %v", p, resp.StatusCode, bytes.Equal(body, want[p]))
			}
			for _, k := range []string{"ETag", "Last-Modified"} {
				if resp.Header.Get(k) != fromOrigin[p].Header.Get(k) {
					t.Errorf("GET %s: %s %q from the copy, %q from the origin", p, k, resp.Header.Get(k), fromOrigin[p].Header.Get(k))
				}
			}
		}
		part, body := h.get("/a.iso", "Range: bytes=100000-", "If-Range: "+fromOrigin["/a.iso"].Header.Get("ETag"))
		if part.StatusCode != 206 || !bytes.Equal(body, want["/a.iso"][100000:]) {
			t.Errorf("resuming from the copy a download begun from the origin: %d", part.StatusCode)
		}
	}
	if sent := store.sent.Load() - before; sent != 0 {
		t.Errorf("the origin sent %d bytes for downloads served from the copy", sent)
	}
	if got := h.metric(t, "sno_iso_origin_bytes_total"); got != originBytes {
		t.Errorf("sno_iso_origin_bytes_total grew from %v to %v with the copy complete", originBytes, got)
	}
	if log := h.log.String(); strings.Contains(log, "TOPSECRET") {
		t.Errorf("the log shows the URL's signature:\n%s", log)
	}
}

// A copy whose bytes do not hash to the sha256 the object's metadata records is dropped,
// loudly: the origin serves on, and no byte comes from the copy.
func TestOriginCopyDigestMismatch(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	store.sha256 = strings.Repeat("0", 64)
	h := copyHarness(t, store, t.TempDir())
	h.waitReady()
	h.waitLog("ERROR: the copy of ")
	if log := h.log.String(); !strings.Contains(log, "x-amz-meta-sha256") || !strings.Contains(log, "serving it from its origin") {
		t.Errorf("the log does not say why the copy was dropped:\n%s", log)
	}
	before := store.sent.Load()
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || store.sent.Load() == before {
		t.Errorf("GET /a.iso after the copy was dropped: %d, from the origin: %v", resp.StatusCode, store.sent.Load() > before)
	}
	if h.srv.servingCopy() || h.metric(t, "sno_iso_origin_copy_complete") != 0 {
		t.Errorf("the server serves a copy that does not match its sha256")
	}
}

// A copy that the origin cuts short resumes where it stopped, and completes.
func TestOriginCopyResumes(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := newCopyStore(t, iso)
	var cuts atomic.Int32
	store.copySpan = func(w http.ResponseWriter, r *http.Request, path string) {
		if cuts.Add(1) == 1 {
			f, err := os.Open(path)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer f.Close()
			http.ServeContent(&cutResponse{ResponseWriter: w, left: 300_000}, r, "", time.Time{}, f)
			return
		}
		serveObjectFile(w, r, path, `"object-v1"`, time.Time{})
	}
	h := copyHarness(t, store, t.TempDir())
	h.waitReady()
	h.waitLog("from the local copy")
	ranges := store.ranges()
	if len(ranges) != 2 || ranges[0] != "bytes=0-1048575" || ranges[1] == ranges[0] {
		t.Fatalf("the copy asked for %q, want the whole object, then the rest from where it was cut", ranges)
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(ranges[1], "-")[0], "bytes="))
	if from < 200_000 || from > 300_000 {
		t.Errorf("the copy resumed at byte %d, cut after 300000", from)
	}
	if !strings.Contains(h.log.String(), "stopped at byte ") {
		t.Errorf("the log does not say the copy stopped:\n%s", h.log.String())
	}
	before := store.sent.Load()
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || store.sent.Load() != before {
		t.Errorf("GET /a.iso from the resumed copy: %d, the built ISO: %v, %d bytes from the origin", resp.StatusCode,
			bytes.Equal(body, h.want(configA)), store.sent.Load()-before)
	}
}

// An object replaced at its origin while its copy is served: a readiness probe notices,
// the new version is opened and copied in turn, and a response begun on the old copy ends
// with the old version's bytes only.
func TestOriginCopyReplaced(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, t.TempDir())
	h.srv.originCheckEvery = 0 // every probe asks the origin
	h.waitReady()
	h.waitLog("from the local copy")
	old := h.want(configA)

	// A download of the old copy, under way while the object is replaced.
	resp, err := http.Get(h.url + h.path("/a.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}

	newISO := fixtures.File(t, "embed-areas-2021-12.iso")
	store.replace(t, newISO, `"object-v2"`)
	h.waitReady()
	h.waitLog("changed at the origin: serving the new version")
	for deadline := time.Now().Add(30 * time.Second); strings.Count(h.log.String(), "from the local copy") < 2; time.Sleep(10 * time.Millisecond) {
		h.get(ReadyPath)
		if time.Now().After(deadline) {
			t.Fatalf("the new version was not copied:\n%s", h.log.String())
		}
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(append(head, rest...), old) {
		t.Errorf("the download begun on the old copy: %v, the old version's bytes: %v", err, bytes.Equal(append(head, rest...), old))
	}
	resp.Body.Close()
	// The old copy's space is freed once its last download ended; the new copy's when the
	// server closes.
	waitOpenCopies(t, h.srv.cfg.ISOCopyDir, 1)
	h.iso = newISO
	before := store.sent.Load()
	next, body := h.get("/a.iso")
	if next.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || next.Header.Get("ETag") == resp.Header.Get("ETag") {
		t.Errorf("after the change: %d, ETag %s (was %s), the new version's bytes: %v", next.StatusCode, next.Header.Get("ETag"),
			resp.Header.Get("ETag"), bytes.Equal(body, h.want(configA)))
	}
	if store.sent.Load() != before {
		t.Errorf("the new version was read from the origin (%d bytes), not its copy", store.sent.Load()-before)
	}
	h.http.Close()
	h.srv.Close()
	waitOpenCopies(t, h.srv.cfg.ISOCopyDir, 0)
}

// waitOpenCopies waits until this process holds want files open in dir (copies have no name:
// /proc shows them as dir/#INODE (deleted)), failing the test after a bound.
func waitOpenCopies(t *testing.T, dir string, want int) {
	t.Helper()
	var open []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		open = open[:0]
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			testenv.Missing(t, "no /proc/self/fd: %v", err)
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
				open = append(open, target)
			}
		}
		if len(open) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d files open in %s, want %d: %q", len(open), dir, want, open)
		}
	}
}

// With the copy complete, a store that stops answering leaves the server ready, serving the
// copy: a store's blip does not take every replica out of the balancer.
func TestOriginCopyStoreDown(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, t.TempDir())
	h.srv.originCheckEvery = 0
	h.waitReady()
	h.waitLog("from the local copy")
	store.objectStore.set(store.path, `"object-v1"`, originDown(http.StatusServiceUnavailable))
	if resp, body := h.get(ReadyPath); resp.StatusCode != 200 {
		t.Errorf("%s with the store down and the copy complete: %d %s", ReadyPath, resp.StatusCode, body)
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("GET /a.iso with the store down: %d", resp.StatusCode)
	}
	h.waitLog("serving the local copy of the version opened")
}

// No room for the copy, or no directory to put it in: the origin serves, and the log says
// why.
func TestOriginCopyNoRoom(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{notDir: "not a directory"}
	if os.Geteuid() == 0 {
		small := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", small).CombinedOutput(); err != nil {
			t.Fatalf("mounting a 512 KiB tmpfs: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", small).Run() })
		cases[small] = "bytes free, the copy needs"
	} else {
		testenv.Root(t, "mounting a file system too small for the copy")
	}
	for dir, why := range cases {
		store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
		h := copyHarness(t, store, dir)
		h.waitReady()
		h.waitLog("not copying " + store.srv.URL + "/bucket/rhcos-live.iso to local disk")
		if log := h.log.String(); !strings.Contains(log, why) || !strings.Contains(log, "serving it from its origin") {
			t.Errorf("%s: the log does not say %q:\n%s", dir, why, log)
		}
		before := store.sent.Load()
		if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || store.sent.Load() == before {
			t.Errorf("%s: GET /a.iso: %d, from the origin: %v", dir, resp.StatusCode, store.sent.Load() > before)
		}
	}
}
