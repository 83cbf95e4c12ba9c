package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sno-iso/sno-iso/origin"
)

// The operational endpoints, on the main handler unless Config.SeparateAdmin; deployments
// point their probes and scrapers at them.
const (
	HealthPath  = "/healthz"
	ReadyPath   = "/readyz"
	MetricsPath = "/metrics"
)

// Admin answers /healthz (the process answers, whatever the origin does), /readyz (the ISO is
// parsed and readable, its origin answers with the version being served unless that is served
// from its complete local copy, the nodes directory
// is listed, and a pre-signed ISO URL is not within minutes of its expiry: 503 with the
// reason otherwise; a probe while the origin has not answered yet asks for an attempt) and
// /metrics (Prometheus). A node whose files are broken leaves the server ready: its requests
// fail on every replica alike, and the index names it.
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
		if err := s.ready(r.Context()); err != nil {
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
func (s *Server) ready(ctx context.Context) error {
	if err := s.presigned.ready(time.Now()); err != nil {
		return err
	}
	iso, err := s.acquireISO()
	if err != nil {
		if errors.Is(err, ErrOriginNotOpen) {
			s.wakeOrigin()
		}
		return err
	}
	object, local := iso.object, iso.fromCopy
	s.releaseISO(iso)
	// A version served from its copy is ready whatever its origin answers, and the watcher
	// asks the origin (watchOrigin): a probe never waits on it.
	if object != nil && !local {
		if err := s.checkOrigin(ctx, object); err != nil {
			return err
		}
	}
	if l := s.listing(); l.err != nil {
		return fmt.Errorf("listing the nodes: %w", l.err)
	}
	return nil
}

// originCheckInterval is how long the origin's last answer to a readiness check stands:
// probes from every kubelet and load balancer do not each become a request to the origin.
const originCheckInterval = 5 * time.Second

// checkOrigin asks the origin for a byte of the version being served, at most once per
// originCheckInterval. A new version there is opened now: ready only if it can be served.
func (s *Server) checkOrigin(ctx context.Context, object *origin.Object) error {
	s.originCheck.Lock()
	defer s.originCheck.Unlock()
	if s.originChecked == object && time.Since(s.originCheckedAt) < s.originCheckEvery {
		return s.originCheckErr
	}
	err := object.Check(ctx)
	if object.Changed() {
		return s.openReplaced()
	}
	return s.noteOriginCheckLocked(object, err, false)
}

// openReplaced opens the version that replaced the ISO at its origin: acquireISO retires the
// one served and opens the new one, or says why it cannot (nil once it is served).
func (s *Server) openReplaced() error {
	iso, err := s.acquireISO()
	if err != nil {
		return err
	}
	s.releaseISO(iso)
	return nil
}

// ServeAdmin answers Admin's endpoints on ln until ctx ends, with the main listener's limits.
func (s *Server) ServeAdmin(ctx context.Context, ln net.Listener) error {
	srv := newHTTPServer(s.Admin(), s.cfg, s.release, s.log)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
