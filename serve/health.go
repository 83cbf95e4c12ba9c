package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The operational endpoints, on the main handler unless Config.SeparateAdmin; deployments
// point their probes and scrapers at them.
const (
	HealthPath  = "/healthz"
	ReadyPath   = "/readyz"
	MetricsPath = "/metrics"
)

// Admin answers /healthz (the process answers), /readyz (the ISO is parsed and readable
// and the nodes directory listed: 503 with the reason otherwise) and /metrics (Prometheus).
func (s *Server) Admin() http.Handler {
	s.adminOnce.Do(func() { s.admin = s.newAdmin() })
	return s.admin
}

func (s *Server) newAdmin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		if err := s.ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET "+MetricsPath, s.metrics.handler())
	return mux
}

// isAdminPath reports whether the main handler passes the request to Admin.
func (s *Server) isAdminPath(path string) bool {
	return !s.cfg.SeparateAdmin && (path == HealthPath || path == ReadyPath || path == MetricsPath)
}

// ready reports why the server cannot serve nodes now, if it cannot.
func (s *Server) ready() error {
	iso, err := s.acquireISO()
	if err != nil {
		return err
	}
	s.releaseISO(iso)
	if l := s.listing(); l.err != nil {
		return fmt.Errorf("listing the nodes: %w", l.err)
	}
	return nil
}

// ServeAdmin answers Admin's endpoints on ln until ctx ends.
func (s *Server) ServeAdmin(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Admin(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.log}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
