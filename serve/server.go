package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/origin"
)

// Server is the http.Handler that serves the nodes. Create it with New; Close it.
type Server struct {
	cfg     Config
	prepare prepareFunc
	log     *log.Logger
	// sem bounds the responses of node files, publicSem those anyone may ask for without a
	// token (/rootfs.img, the index): each class has MaxConcurrent places of its own.
	sem, publicSem chan struct{}
	ctx            context.Context // ends with Close: minimal ISO builds stop
	cancel         context.CancelFunc

	metrics   *metrics
	release   *memoryRelease // shared by the main and the admin listener
	adminOnce sync.Once
	admin     http.Handler // see Admin

	mu       sync.Mutex
	iso      *isoState       // nil after Close, and until an origin first answers
	opening  *originOpening  // why the ISO at its origin is not open yet; nil once it is
	isoErr   error           // the ISO changed and the new version cannot be served
	badStamp filestamp.Stamp // the version isoErr is about, not parsed again
	list     *listing
	nodes    nodeCache
	closing  sync.WaitGroup // retired ISO versions being closed, media being made
	closed   bool           // Close began: no more background work starts

	// originWake carries readiness probes' requests for an attempt to open the origin.
	originWake chan struct{}
	// originCheck serializes readiness checks of the origin; the last one's answer stands for
	// originCheckEvery (originCheckInterval).
	originCheck      sync.Mutex
	originChecked    *origin.Object
	originCheckedAt  time.Time
	originCheckErr   error
	originCheckEvery time.Duration
	secret           *capability.Source // nil for an open server
	presigned        *presignedURL      // the ISO's URL's expiry; nil when it has none
	fetches          fetchLog
	reports          *reports // nil for an open server
}

// ErrNodesNotDir says that Config.NodesDir is not a directory.
var ErrNodesNotDir = errors.New("the nodes directory is not a directory")

// New parses the ISO and checks the nodes directory. An ISO given by URL is opened in the
// background: New waits a little for its origin, returns an error only when the origin can
// never serve it (not http(s), no Range requests, no validator), and otherwise returns a
// server that answers 503 and is not ready until the origin answers with a pristine ISO.
func New(cfg Config) (*Server, error) {
	return newServer(cfg, nil)
}

// newServer makes a Server that prepares nodes with prepare, or prepareReporting when nil.
func newServer(cfg Config, prepare prepareFunc) (*Server, error) {
	if cfg.NodeCacheBytes <= 0 {
		cfg.NodeCacheBytes = DefaultNodeCacheBytes
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.PrepareTimeout <= 0 {
		cfg.PrepareTimeout = DefaultPrepareTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if info, err := os.Stat(cfg.NodesDir); err != nil {
		return nil, err
	} else if !info.IsDir() {
		return nil, fmt.Errorf("%s: %w", cfg.NodesDir, ErrNodesNotDir)
	}
	m := newMetrics()
	if observe := cfg.Origin.Observe; observe != nil {
		cfg.Origin.Observe = func(n int64, err error) {
			m.observeOrigin(n, err)
			observe(n, err)
		}
	} else {
		cfg.Origin.Observe = m.observeOrigin
	}
	// A local file opens now: one missing or not pristine is the user's mistake to fix, not a
	// blip to wait out. An origin opens in the background (startOrigin).
	var iso *isoState
	if !isURL(cfg.ISO) {
		var err error
		if iso, err = openISO(context.Background(), cfg.ISO, cfg.Origin); err != nil {
			return nil, err
		}
	}
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	logger := log.New(out, "", log.LstdFlags)
	if cfg.Logger != nil {
		logger = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelInfo)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, prepare: prepare, log: logger, sem: make(chan struct{}, cfg.MaxConcurrent),
		publicSem: make(chan struct{}, cfg.MaxConcurrent),
		ctx:       ctx, cancel: cancel, iso: iso, metrics: m, release: newMemoryRelease(),
		originCheckEvery: originCheckInterval, originWake: make(chan struct{}),
	}
	s.watchPresigned(time.Now())
	if iso == nil {
		m.watchOrigin()
	}
	if iso == nil && cfg.ISOCopyDir != "" {
		m.watchCopy(s.servingCopy)
	}
	// Before the secret is created: a misconfigured origin leaves nothing behind.
	if iso == nil {
		if err := s.startOrigin(); err != nil {
			s.Close()
			return nil, err
		}
	}
	if !cfg.Open {
		// The nodes directory's own secret is created on first start; a given file is only read.
		path, create := cfg.SecretFile, cfg.SecretFile == ""
		if create {
			path = capability.SecretPath(cfg.NodesDir)
		}
		secret, created, err := capability.OpenSource(path, create, cfg.RotationGrace)
		if err != nil {
			s.Close()
			return nil, err
		}
		if created {
			logger.Printf("created the secret of the capability URLs: %s", secret.Path())
		}
		s.secret = secret
	}
	s.nodes.budget, s.nodes.observe = cfg.NodeCacheBytes, m.nodeCacheUsed
	if s.secret != nil {
		s.newReports()
	}
	if prepare == nil {
		s.prepare = s.prepareReporting
	}
	return s, nil
}

// Close stops minimal and grown ISO builds, releases the ISO and removes the minimal and
// grown ISOs. Requests must be over (see Serve).
func (s *Server) Close() error {
	s.cancel()
	s.mu.Lock()
	s.closed = true
	if s.iso != nil {
		s.retireLocked(s.iso)
		s.iso = nil
	}
	s.mu.Unlock()
	s.nodes.retireAll()
	s.closing.Wait()
	return nil
}

// track counts background work that Close waits for, until done is called; ok is false,
// and the work must not start, once Close began (a request that outlived the shutdown's grace
// may still ask).
func (s *Server) track() (done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.closing.Add(1)
	return s.closing.Done, true
}
