package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// shutdownGrace is how long Serve lets requests in progress finish after ctx ends.
const shutdownGrace = 30 * time.Second

// Bounds on what a client may make the server hold before its request is read: the
// headers of a GET take well under a KiB, and arrive at once.
const (
	maxHeaderBytes = 16 << 10
	headerTimeout  = 10 * time.Second
)

// connLimit closes, as soon as it is accepted, a connection past max open ones: a crowd of
// idle or slow clients costs a bounded amount of memory and descriptors. It counts in
// http.Server's ConnState, which sees TLS connections as they are.
type connLimit struct {
	max  int64
	open atomic.Int64
	// idle, when set, is told each time the last open connection closes.
	idle func()
}

func (l *connLimit) track(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		if l.open.Add(1) > l.max {
			c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		if l.open.Add(-1) == 0 && l.idle != nil {
			l.idle()
		}
	}
}

// memoryReleaseInterval is the least time between two returns of free memory to the system.
const memoryReleaseInterval = 30 * time.Second

// memoryRelease gives the memory a burst of connections left free back to the system once
// they are all gone. Go's runtime keeps freed pages for reuse and returns them over minutes
// or never (a burst of 300 slow 1 MB headers left 12 MiB more resident for good): a replica
// under a memory limit must not keep the high-water mark of an attack. A forced collection
// costs milliseconds, so it runs at most once per interval, and only if the server is still
// without connections when its turn comes.
type memoryRelease struct {
	interval time.Duration
	free     func() // debug.FreeOSMemory
	open     func() int64

	mu        sync.Mutex
	last      time.Time
	scheduled bool
}

// idle is connLimit.idle: a release is scheduled unless one already is.
func (m *memoryRelease) idle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scheduled {
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
	if m.open() > 0 {
		// Connections came back: the next time they are all gone schedules a release.
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
	limit := &connLimit{max: int64(s.cfg.MaxConnections)}
	release := &memoryRelease{interval: memoryReleaseInterval, free: freeMemory, open: limit.open.Load}
	limit.idle = release.idle
	srv := &http.Server{
		Handler:           s,
		ConnState:         limit.track,
		ReadHeaderTimeout: headerTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          s.log,
	}
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
