package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeConn is a connection from addr that only records being closed.
type fakeConn struct {
	net.Conn
	addr   net.Addr
	closed atomic.Bool
}

func newFakeConn(host string) *fakeConn {
	return &fakeConn{addr: &net.TCPAddr{IP: net.ParseIP(host), Port: 40000}}
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }

// releaseCounter is a memoryRelease that counts its releases, with no interval between them.
func releaseCounter() (*memoryRelease, chan struct{}) {
	freed := make(chan struct{}, 16)
	return &memoryRelease{free: func() { freed <- struct{}{} }}, freed
}

// TestMemoryReleasedAfterBurstDespiteIdleConnections: the memory a burst left free is returned
// once no connection reads or answers a request, though a kept-alive one stays open (a
// scraper of /metrics), and not while a request is under way.
func TestMemoryReleasedAfterBurstDespiteIdleConnections(t *testing.T) {
	release, freed := releaseCounter()
	limit := newConnLimit(10, 0, release)
	scraper, burst := newFakeConn("192.0.2.1"), newFakeConn("192.0.2.2")
	limit.track(scraper, http.StateNew)
	limit.track(burst, http.StateNew)
	limit.track(scraper, http.StateActive)
	limit.track(scraper, http.StateIdle) // kept alive, open
	select {
	case <-freed:
		t.Fatal("memory released while a connection reads its request")
	default:
	}
	limit.track(burst, http.StateClosed)
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not released after the burst, while an idle kept-alive connection stays open")
	}

	// A request under way when the release's turn comes: no release then.
	limit.track(scraper, http.StateActive)
	release.run()
	select {
	case <-freed:
		t.Fatal("memory released while a request is under way")
	default:
	}
}

// TestConnectionLimitClosesTheOldestWaiting: past the bound the connection that has waited
// longest for a request is closed, not the new one nor one in the middle of a request; past
// the per-client bound, the client's own oldest.
func TestConnectionLimitClosesTheOldestWaiting(t *testing.T) {
	release, _ := releaseCounter()
	limit := newConnLimit(3, 2, release)
	answering, idle, flood1 := newFakeConn("192.0.2.1"), newFakeConn("192.0.2.1"), newFakeConn("192.0.2.9")
	for _, c := range []*fakeConn{answering, idle, flood1} {
		limit.track(c, http.StateNew)
	}
	limit.track(answering, http.StateActive)
	// A second connection of the flooding client: over the bound of 3 in all; idle, which sent
	// nothing yet, has waited longest.
	flood2 := newFakeConn("192.0.2.9")
	limit.track(flood2, http.StateNew)
	if !idle.closed.Load() || answering.closed.Load() || flood1.closed.Load() || flood2.closed.Load() {
		t.Fatalf("closed: answering %v, idle %v, flood1 %v, flood2 %v; want idle only",
			answering.closed.Load(), idle.closed.Load(), flood1.closed.Load(), flood2.closed.Load())
	}
	limit.track(idle, http.StateClosed)
	// A third of the flooding client: over its bound of 2, its own oldest goes.
	flood3 := newFakeConn("192.0.2.9")
	limit.track(flood3, http.StateNew)
	if !flood1.closed.Load() || answering.closed.Load() || flood3.closed.Load() {
		t.Fatalf("closed: flood1 %v, answering %v, flood3 %v; want flood1 only", flood1.closed.Load(), answering.closed.Load(), flood3.closed.Load())
	}
	limit.track(flood1, http.StateClosed)
	// Every other connection in the middle of a request: the new one is closed.
	limit.track(flood2, http.StateActive)
	limit.track(flood3, http.StateActive)
	late := newFakeConn("192.0.2.3")
	limit.track(late, http.StateNew)
	if !late.closed.Load() {
		t.Fatal("a connection past the bound was kept while every other was answering")
	}
}

// holdIdle opens n connections to addr that send nothing, closed when the test ends.
func holdIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	return conns
}

// TestIdleFloodDoesNotLockOutNodes: a client holding every connection the server allows,
// sending nothing, does not keep a node's request out: its oldest is closed instead.
func TestIdleFloodDoesNotLockOutNodes(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.MaxConnections = 16 })
	addr := serving(t, h.srv.Serve)
	flood := holdIdle(t, addr, 16)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+h.path("/a.iso"), nil)
		req.Header.Set("Range", "bytes=0-99")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d with 16 idle connections open: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPartialContent {
			t.Fatalf("request %d: %d, want 206", i, resp.StatusCode)
		}
	}
	// The oldest idle connections were the ones closed.
	flood[0].SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := flood[0].Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the oldest idle connection is still open: %d, %v", n, err)
	}
}

// TestAdminListenerHasTheLimits: --admin-listen has the main listener's bounds: a header
// over 16 KiB is refused, and idle connections do not lock out the probes.
func TestAdminListenerHasTheLimits(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.MaxConnections = 8; c.SeparateAdmin = true })
	addr := serving(t, h.srv.ServeAdmin)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", HealthPath, strings.Repeat("a", 64<<10))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 64 KiB header on the admin listener: %d, want 431", resp.StatusCode)
	}
	holdIdle(t, addr, 8)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}
	resp, err = client.Get("http://" + addr + HealthPath)
	if err != nil {
		t.Fatalf("/healthz with 8 idle connections open: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}
