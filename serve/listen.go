package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
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
}

func (l *connLimit) track(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		if l.open.Add(1) > l.max {
			c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		l.open.Add(-1)
	}
}

// Serve answers requests on ln until ctx ends, then stops accepting, lets the requests in
// progress finish for up to 30 seconds, and closes the connections left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	limit := &connLimit{max: int64(s.cfg.MaxConnections)}
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
