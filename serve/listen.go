package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long Serve lets requests in progress finish after ctx ends.
const shutdownGrace = 30 * time.Second

// Serve answers requests on ln until ctx ends, then stops accepting, lets the requests in
// progress finish for up to 30 seconds, and closes the connections left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
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
