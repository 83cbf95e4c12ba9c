package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// Many first requests at once for a node's minimal ISO make it once and all get its bytes.
func TestMinimalMadeOnceForConcurrentRequests(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) {
		c.BaseURL = "http://192.0.2.1:8080"
	})
	const clients = 40
	bodies := make([][]byte, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := h.get("/a-minimal.iso")
			if resp.StatusCode != 200 {
				t.Errorf("client %d: %d %s", i, resp.StatusCode, body)
			}
			bodies[i] = body
		}()
	}
	wg.Wait()
	for i := range bodies {
		if !bytes.Equal(bodies[i], bodies[0]) {
			t.Fatalf("client %d got %d bytes, client 0 %d: not the same minimal ISO", i, len(bodies[i]), len(bodies[0]))
		}
	}
	_, metrics := h.get(MetricsPath)
	if made := metricValue(t, string(metrics), `sno_iso_node_media_made_total{kind="minimal"}`); made != 1 {
		t.Errorf("%v minimal ISOs made for %d concurrent requests, want 1", made, clients)
	}
}

// paddedSize makes an ISO larger than what the loopback's socket buffers take, so that a
// client that stops reading leaves the server blocked in a write.
const paddedSize = 32 << 20

// paddedISO is the fixture ISO extended with zeros to size bytes (a sparse file: it takes
// no disk), as hybrid images are padded.
func paddedISO(t testing.TB, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "padded.iso")
	if err := os.WriteFile(path, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// stalledGet sends a GET for the plain path on a connection that reads the status line and
// then nothing: the server's writes block once the socket buffers are full. The response is
// in progress (holding its place) when stalledGet returns.
func (h *harness) stalledGet(path string) net.Conn {
	h.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", h.path(path), strings.TrimPrefix(h.url, "http://"))
	line := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, line); err != nil || string(line) != "HTTP/1.1 200" {
		h.t.Fatalf("the stalled client's response: %q, %v", line, err)
	}
	return conn
}

// statusOnceFree asks for path until the answer is not the busy server's 503, for up to
// a bound that only keeps a broken server from hanging the test, and returns its status.
func (h *harness) statusOnceFree(path string) int {
	h.t.Helper()
	for range 200 {
		resp, body := h.get(path)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "busy") {
			return resp.StatusCode
		}
		time.Sleep(50 * time.Millisecond)
	}
	return http.StatusServiceUnavailable
}

// A node whose file blocks its preparation (a named pipe read the blocking way, as a file
// system that does not answer) gets 503 with Retry-After once the time limit passes, while
// the requests waiting for it hold no place: the other nodes keep being served.
func TestStuckNodeKeepsOthersServed(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) {
		c.MaxConcurrent, c.PrepareTimeout = 2, 300*time.Millisecond
	})
	if err := os.Mkdir(filepath.Join(h.nodes, "stuck"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(h.nodes, "stuck", testConfig)
	fixtures.NamedPipe(t, fifo)
	t.Cleanup(func() {
		// A writer that comes and goes ends the preparation's read.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	const waiting = 6
	statuses := make(chan *http.Response, waiting)
	bodies := make(chan string, waiting)
	for range waiting {
		go func() {
			resp, body := h.get("/stuck.iso")
			statuses <- resp
			bodies <- string(body)
		}()
	}
	for range 200 {
		_, metrics := h.get(MetricsPath)
		if metricValue(t, string(metrics), "sno_iso_http_requests_in_flight") >= waiting {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 3 {
		if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
			t.Errorf("another node while one is stuck: %d %q", resp.StatusCode, body[:min(len(body), 200)])
		}
	}
	for range waiting {
		resp, body := <-statuses, <-bodies
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || strings.Contains(body, h.nodes) {
			t.Errorf("the stuck node: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if !strings.Contains(h.log.String(), "node stuck: its preparation has taken more than") {
		t.Errorf("the log does not say the node is stuck:\n%s", h.log.String())
	}
}

// waitFetched waits until the fetch of the plain path is recorded: the server records it
// once the handler returns, which can be after the client has the last byte (sendfile sends
// it from within the handler). The bound only keeps a broken server from hanging the test.
func (h *harness) waitFetched(path string) {
	h.t.Helper()
	for range 200 {
		if h.srv.fetches.describe(path) != "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("the fetch of %s was never recorded", path)
}

// The index says ready only for a node whose every listed file can be served: the fixture's
// initramfs is a placeholder, so initrd.img answers 500 and the index says so, without the
// server's paths; a broken node's state names the kind of problem, not the file.
func TestIndexStateIsHonest(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "broken": "broken config"}, nil)
	if resp, _ := h.get("/a/initrd.img"); resp.StatusCode != 500 {
		t.Fatalf("initrd.img over the placeholder initramfs: %d, want 500", resp.StatusCode)
	}
	h.get("/broken.iso")
	_, page := h.remoteIndex()
	if !strings.Contains(page, "not ready: minimal ISO: the server does not know") || !strings.Contains(page, "; initrd.img: ") {
		t.Errorf("the index does not say which of a's files cannot be served:\n%s", page)
	}
	if !strings.Contains(page, "broken: the node&#39;s files or the ISO cannot be used") || strings.Contains(page, "broken on purpose") ||
		strings.Contains(page, h.nodes) || strings.Contains(page, h.iso) {
		t.Errorf("the index shows a broken node's details or the server's paths to a remote client:\n%s", page)
	}
}

// remoteIndex is the index page as a client on another machine gets it.
func (h *harness) remoteIndex() (int, string) {
	remote := httptest.NewRequest(http.MethodGet, "/", nil)
	remote.RemoteAddr = "192.0.2.2:40000"
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, remote)
	return rec.Code, rec.Body.String()
}

// A client that stops reading is cut off after the write timeout, freeing its place for a
// client that reads, and never gets the whole body.
func TestStalledReaderCutOff(t *testing.T) {
	h := newHarness(t, paddedISO(t, paddedSize), map[string]string{"a": configA}, func(c *testSetup) {
		c.MaxConcurrent, c.WriteTimeout = 1, 2*time.Second
	})
	stalled := h.stalledGet("/a.iso")
	if status := h.statusOnceFree("/a.iso"); status != 200 {
		t.Errorf("another client once the stalled one is cut off: %d", status)
	}
	// What the stalled client can still read ends short of the body.
	rest, _ := io.Copy(io.Discard, stalled)
	if rest >= paddedSize {
		t.Errorf("the stalled client got %d bytes after the status line: the whole body", rest)
	}
}

// An ISO written in place while a download reads it: the download is cut short, never a
// 200 with the full Content-Length of mixed bytes; the log says so, and the next request
// gets the new bytes whole. So too when the writer sets the old modification time back
// afterwards, as rsync --inplace --times does (on systems with a status change time).
func TestISOEditedMidDownloadAborts(t *testing.T) {
	t.Run("mtime-changed", func(t *testing.T) { testISOEditedMidDownload(t, false) })
	t.Run("mtime-restored", func(t *testing.T) {
		if _, ok := filestamp.ChangeTime(statOf(t, t.TempDir())); !ok {
			testenv.Missing(t, "no status change time on this system: a restored mtime hides the edit")
		}
		testISOEditedMidDownload(t, true)
	})
}

func statOf(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func testISOEditedMidDownload(t *testing.T, restoreMTime bool) {
	iso := paddedISO(t, paddedSize)
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(iso, past, past); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, iso, map[string]string{"a": configA}, nil)
	resp, err := http.Get(h.url + h.path("/a.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(iso, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	edit := bytes.Repeat([]byte("edited"), 1000)
	if _, err := f.WriteAt(edit, paddedSize-int64(len(edit))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if restoreMTime {
		if err := os.Chtimes(iso, past, past); err != nil {
			t.Fatal(err)
		}
	}
	got, err := io.Copy(io.Discard, resp.Body)
	if err == nil || 1<<20+got >= resp.ContentLength {
		t.Errorf("the download across the edit: %d of %d bytes, error %v; want it cut short", 1<<20+got, resp.ContentLength, err)
	}
	if !strings.Contains(h.log.String(), "changed while being sent") {
		t.Errorf("the log does not say why the download was cut:\n%s", h.log.String())
	}
	resp2, body := h.get("/a.iso")
	if resp2.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("after the edit: %d, %d bytes, not the edited ISO customized", resp2.StatusCode, len(body))
	}
}

// A server refuses, at start, an ISO that is already customized: its nodes' media would be
// customizations of a customization.
func TestNewRefusesCustomizedISO(t *testing.T) {
	iso := buildExpected(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), configA)
	_, err := New(Config{ISO: iso, NodesDir: t.TempDir(), Open: true})
	if !errors.Is(err, isobuilder.ErrCustomized) || !strings.Contains(err.Error(), iso) {
		t.Errorf("got %v, want ErrCustomized naming %s", err, iso)
	}
}

// A request holding a replaced ISO that finds a preparation under way against the old one
// must not be answered from it: the old ISO is closed once its last holder lets go.
func TestPreparationAgainstReplacedISONotJoined(t *testing.T) {
	gate := make(chan struct{})
	var calls atomic.Int32
	base := testPrepare(&calls)
	var started atomic.Bool
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) {
		c.prepare = func(dir string) (*node.Node, []string, error) {
			if started.CompareAndSwap(false, true) {
				<-gate
			}
			return base(dir)
		}
	})
	iso1, err := h.srv.acquireISO()
	if err != nil {
		t.Fatal(err)
	}
	ctxA, cancelA := context.WithCancel(context.Background())
	aDone := make(chan struct{})
	go func() { h.srv.node(ctxA, iso1, "a"); close(aDone) }()
	for deadline := time.Now().Add(10 * time.Second); !started.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first preparation did not start")
		}
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(h.iso, later, later); err != nil {
		t.Fatal(err)
	}
	iso2, err := h.srv.acquireISO()
	if err != nil {
		t.Fatal(err)
	}
	defer h.srv.releaseISO(iso2)
	if iso2 == iso1 {
		t.Fatal("the ISO was not reopened after it changed")
	}
	type result struct {
		ns  *nodeState
		err error
	}
	bDone := make(chan result, 1)
	go func() { ns, err := h.srv.node(context.Background(), iso2, "a"); bDone <- result{ns, err} }()
	time.Sleep(100 * time.Millisecond) // B joins the preparation under way
	cancelA()
	<-aDone
	h.srv.releaseISO(iso1) // its last holder: iso1 is closed
	close(gate)
	r := <-bDone
	if r.err != nil {
		t.Fatalf("the request holding the new ISO: %v", r.err)
	}
	if r.ns.iso != iso2 {
		t.Fatalf("the request holding the new ISO got a node prepared against the old one (closed: %v)", r.ns.iso.retired)
	}
	if _, err := h.srv.nodeISO(context.Background(), r.ns, ""); err != nil {
		t.Errorf("the node's ISO: %v", err)
	}
}
