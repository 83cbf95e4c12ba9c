package serve

import (
	"container/list"
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// shutdownGrace is how long Serve lets requests in progress finish after ctx ends.
const shutdownGrace = 30 * time.Second

// Bounds on what a client may make the server hold before its request is read: the
// headers of a GET take well under a KiB, and arrive at once.
const (
	maxHeaderBytes = 16 << 10
	headerTimeout  = 10 * time.Second
	idleTimeout    = 2 * time.Minute
)

// newHTTPServer is the http.Server of each listener, the main one and --admin-listen alike:
// bounded headers, timeouts, the connection limits of cfg, and the memory release after a
// burst.
func newHTTPServer(h http.Handler, cfg Config, release *memoryRelease, logger *log.Logger) *http.Server {
	limit := newConnLimit(cfg.MaxConnections, cfg.MaxConnectionsPerClient, release)
	return &http.Server{
		Handler:           h,
		ConnState:         limit.track,
		ReadHeaderTimeout: headerTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleTimeout,
		ErrorLog:          logger,
	}
}

// connLimit bounds the connections open at once, in all and per client address. Past a
// bound it closes the oldest connection that is waiting for a request (it has sent none
// yet, or is idle between two), of the same client for the per-client bound: a crowd of idle
// or slow clients costs bounded memory and descriptors, yet cannot keep a node's request out.
// Only when every connection is in the middle of a request is the new one closed. It counts
// in http.Server's ConnState, which sees TLS connections as they are (HTTP/1 only: the
// server offers no HTTP/2, whose ConnState skips the active state).
type connLimit struct {
	max, maxPerClient int // maxPerClient 0: no per-client bound
	release           *memoryRelease

	mu        sync.Mutex
	conns     map[net.Conn]*trackedConn
	waiting   list.List // of net.Conn waiting for a request, the longest waiting first
	perClient map[string]int
	open      int // conns not yet closed by the limit
}

type trackedConn struct {
	client  string
	waiting *list.Element // nil while a request is read in full and answered
	busy    bool          // reading a request or answering it: counted in release
	closed  bool          // closed by the limit, not yet seen closed by the server
}

func newConnLimit(max, maxPerClient int, release *memoryRelease) *connLimit {
	return &connLimit{max: max, maxPerClient: maxPerClient, release: release,
		conns: map[net.Conn]*trackedConn{}, perClient: map[string]int{}}
}

// clientOf is the address a connection comes from, without its port.
func clientOf(c net.Conn) string {
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

func (l *connLimit) track(c net.Conn, state http.ConnState) {
	var evict []net.Conn
	l.mu.Lock()
	t := l.conns[c]
	switch {
	case state == http.StateNew:
		t = &trackedConn{client: clientOf(c)}
		l.conns[c] = t
		l.open++
		l.perClient[t.client]++
		t.waiting = l.waiting.PushBack(c)
		l.setBusy(t, true) // reading its first request
		if l.maxPerClient > 0 && l.perClient[t.client] > l.maxPerClient {
			evict = append(evict, l.evictLocked(t.client))
		}
		if l.open > l.max { // not after the line above, which closed one
			evict = append(evict, l.evictLocked(""))
		}
	case t == nil:
		// Closed by the limit and already forgotten.
	case state == http.StateActive:
		if t.waiting != nil {
			l.waiting.Remove(t.waiting)
			t.waiting = nil
		}
		l.setBusy(t, true)
	case state == http.StateIdle:
		if !t.closed && t.waiting == nil {
			t.waiting = l.waiting.PushBack(c)
		}
		l.setBusy(t, false)
	case state == http.StateClosed || state == http.StateHijacked:
		l.forgetLocked(c, t)
		l.setBusy(t, false)
		delete(l.conns, c)
	}
	l.mu.Unlock()
	for _, c := range evict {
		c.Close()
	}
}

// evictLocked takes the oldest waiting connection (of client, unless "") out of the counts
// and returns it, to be closed. The one just accepted waits at the back: it is taken when no
// other waits.
func (l *connLimit) evictLocked(client string) net.Conn {
	e := l.waiting.Front()
	for client != "" && l.conns[e.Value.(net.Conn)].client != client {
		e = e.Next()
	}
	c := e.Value.(net.Conn)
	l.forgetLocked(c, l.conns[c])
	return c
}

// forgetLocked takes t out of the waiting list and the counts, once.
func (l *connLimit) forgetLocked(c net.Conn, t *trackedConn) {
	if t.waiting != nil {
		l.waiting.Remove(t.waiting)
		t.waiting = nil
	}
	if t.closed {
		return
	}
	t.closed = true
	l.open--
	if l.perClient[t.client]--; l.perClient[t.client] == 0 {
		delete(l.perClient, t.client)
	}
}

func (l *connLimit) setBusy(t *trackedConn, busy bool) {
	if t.busy != busy {
		t.busy = busy
		l.release.busy(busy)
	}
}

// memoryReleaseInterval is the least time between two returns of free memory to the system.
const memoryReleaseInterval = 30 * time.Second

// memoryRelease gives the memory a burst of connections left free back to the system once
// no connection on any listener reads or answers a request: kept-alive idle ones (a
// Prometheus scraper) do not hold it back. Go's runtime keeps freed pages for reuse and returns
// them over minutes or never (a burst of 300 slow 1 MB headers left 12 MiB more resident for
// good): a replica under a memory limit must not keep the high-water mark of an attack. A
// forced collection costs milliseconds, so it runs at most once per interval, and only if
// the server is still quiet when its turn comes.
type memoryRelease struct {
	interval time.Duration
	free     func() // freeMemory

	mu        sync.Mutex
	busyConns int // connections reading or answering a request
	last      time.Time
	scheduled bool
}

func newMemoryRelease() *memoryRelease {
	return &memoryRelease{interval: memoryReleaseInterval, free: freeMemory}
}

// busy counts a connection that starts (true) or stops reading or answering a request; the
// last one to stop schedules a release unless one already is.
func (m *memoryRelease) busy(start bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if start {
		m.busyConns++
		return
	}
	if m.busyConns--; m.busyConns > 0 || m.scheduled {
		return
	}
	m.scheduled = true
	time.AfterFunc(time.Until(m.last.Add(m.interval)), m.run)
}

// freeMemory returns free memory to the system. The first collection moves the buffers that
// net/http pools for reading connections to the pools' victim caches, the second (in
// FreeOSMemory) frees them.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

func (m *memoryRelease) run() {
	m.mu.Lock()
	m.scheduled = false
	if m.busyConns > 0 {
		// Requests came back: the next time they are all over schedules a release.
		m.mu.Unlock()
		return
	}
	m.last = time.Now()
	m.mu.Unlock()
	m.free()
}

// Serve answers requests on ln until ctx ends, then stops accepting, lets the requests in
// progress finish for up to 30 seconds, and closes the connections left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := newHTTPServer(s, s.cfg, s.release, s.log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(grace)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Printf("requests still in progress after %v: closing their connections", shutdownGrace)
		err = srv.Close()
	}
	<-served
	return err
}
