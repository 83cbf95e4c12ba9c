package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/origin"
)

// prepareFunc prepares the node whose files are in dir. inputs are the files it read or
// looked for, also when it fails: a change to any of them (or to dir) prepares the node
// again, so a fixed file is picked up without a restart.
type prepareFunc func(dir string) (n *node.Node, inputs []string, err error)

// prepareDir prepares a node directory as node.DirInputs lays it out: exactly what `sno-iso
// build` and `sno-iso pxe build` make of the same files.
func prepareDir(dir string) (*node.Node, []string, error) {
	return node.Load(node.DirInputs(dir))
}

// Config says what a Server serves.
type Config struct {
	// ISO is the pristine live ISO: a path, or an http(s) URL of an origin that answers
	// Range requests. It is parsed once, and again when the file or object changes.
	ISO string
	// Origin tunes the reads of an ISO given by URL.
	Origin origin.Options
	// NodesDir holds a directory per node, named after the node, laid out as
	// node.DirInputs reads it.
	NodesDir string
	// BaseURL is the http URL at which nodes reach this server, for the rootfs URL of
	// minimal ISOs and the URLs in boot.ipxe. Empty: boot.ipxe uses the request's Host,
	// and a minimal ISO needs the node's own rootfs URL.
	BaseURL string
	// MaxConcurrent bounds the responses in progress; more are refused with 503. A request
	// waiting for its node's preparation or a minimal ISO's build holds no place.
	MaxConcurrent int
	// PrepareTimeout bounds a node's preparation (reading and checking its files): past it,
	// the node's requests are answered 503 until the preparation ends. 0 means
	// DefaultPrepareTimeout.
	PrepareTimeout time.Duration
	// WriteTimeout is how long a client may take to accept each 512 KiB of a response
	// before it is cut off, freeing its place. 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// TempDir receives the minimal ISOs (one per rootfs URL, unlinked once open) and the
	// grown ISOs.
	TempDir string
	// GrowEmbedArea serves a node whose payload does not fit the ISO's Ignition area from
	// the ISO rebuilt with a larger one, made for that node on first request, as
	// node.MediaOptions.GrowEmbedArea does.
	GrowEmbedArea bool
	// Log receives one line per request and the nodes' warnings; nil discards them.
	Log io.Writer
	// Logger, when set, receives those lines instead, as slog records (JSON, for one).
	Logger *slog.Logger
	// SeparateAdmin keeps /healthz, /readyz and /metrics off the main handler: they are
	// served by Admin, on an address of their own.
	SeparateAdmin bool
	// Open publishes the nodes' media under plain, guessable URLs (/<node>.iso) instead of
	// capability URLs (/<token>/<node>.iso), for networks where every client may have them.
	Open bool
	// SecretFile holds the secret the capability tokens are derived from; empty means
	// capability.SecretPath(NodesDir), created on first start.
	SecretFile string
	// RotationGrace is how long the tokens of a replaced secret keep working when the new
	// file does not carry the old key itself (as capability.RotateSecretFile writes it).
	RotationGrace time.Duration
}

// DefaultMaxConcurrent is the concurrency limit when Config.MaxConcurrent is 0: each
// request holds at most two descriptors (its connection and its view of the ISO).
const DefaultMaxConcurrent = 128

// DefaultPrepareTimeout is the time limit of a node's preparation when
// Config.PrepareTimeout is 0: reading a few small files and compressing them takes well under
// a second; longer means a file system that does not answer.
const DefaultPrepareTimeout = 30 * time.Second

// DefaultWriteTimeout is Config.WriteTimeout when 0.
const DefaultWriteTimeout = time.Minute

// shutdownGrace is how long Serve lets requests in progress finish after ctx ends.
const shutdownGrace = 30 * time.Second

// Server is the http.Handler that serves the nodes. Create it with New; Close it.
type Server struct {
	cfg     Config
	prepare prepareFunc
	log     *log.Logger
	sem     chan struct{}
	ctx     context.Context // ends with Close: minimal ISO builds stop
	cancel  context.CancelFunc

	metrics   *metrics
	adminOnce sync.Once
	admin     http.Handler // see Admin

	mu       sync.Mutex
	iso      *isoState       // nil after Close
	isoErr   error           // the ISO changed and the new version cannot be served
	badStamp filestamp.Stamp // the version isoErr is about, not parsed again
	list     *listing
	nodes    map[string]*nodeEntry
	closing  sync.WaitGroup // retired ISO versions being closed, media being made
	closed   bool           // Close began: no more background work starts

	// originErr is why the object that replaced the ISO at its origin cannot be served,
	// until originRetry: an origin that is down is not asked again by every request.
	originErr   error
	originRetry time.Time
	secret      *capability.Source // nil for an open server
	fetches     fetchLog
}

// ErrNodesNotDir says that Config.NodesDir is not a directory.
var ErrNodesNotDir = errors.New("the nodes directory is not a directory")

// New parses the ISO and checks the nodes directory.
func New(cfg Config) (*Server, error) {
	return newServer(cfg, prepareDir)
}

func newServer(cfg Config, prepare prepareFunc) (*Server, error) {
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
	iso, err := openISO(cfg.ISO, cfg.Origin)
	if err != nil {
		return nil, err
	}
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	logger := log.New(out, "", log.LstdFlags)
	if cfg.Logger != nil {
		logger = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelInfo)
	}
	var secret *capability.Source
	if !cfg.Open {
		// The nodes directory's own secret is created on first start; a given file is only read.
		path, create := cfg.SecretFile, cfg.SecretFile == ""
		if create {
			path = capability.SecretPath(cfg.NodesDir)
		}
		var created bool
		if secret, created, err = capability.OpenSource(path, create, cfg.RotationGrace); err != nil {
			iso.close()
			return nil, err
		}
		if created {
			logger.Printf("created the secret of the capability URLs: %s", secret.Path())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg: cfg, prepare: prepare, log: logger, sem: make(chan struct{}, cfg.MaxConcurrent),
		ctx: ctx, cancel: cancel, iso: iso, nodes: map[string]*nodeEntry{}, metrics: m, secret: secret,
	}, nil
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
	for _, e := range s.nodes {
		if ns := e.cur.Load(); ns != nil {
			ns.retire()
		}
	}
	s.mu.Unlock()
	s.closing.Wait()
	return nil
}

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

// ServeHTTP answers GET and HEAD for / (an index), /rootfs.img, /<token>/<node>.iso,
// /<token>/<node>-minimal.iso and /<token>/<node>/{vmlinuz,initrd.img,rootfs.img,boot.ipxe},
// or the same paths without /<token> on an open server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.isAdminPath(r.URL.Path) {
		s.Admin().ServeHTTP(w, r)
		return
	}
	start := time.Now()
	lw := &logWriter{ResponseWriter: w, writeTimeout: s.cfg.WriteTimeout}
	var err error
	aborted := false
	s.metrics.inFlight.Inc()
	defer func() {
		s.metrics.inFlight.Dec()
		s.metrics.observeRequest(r.URL.Path, lw.code(), lw.written, time.Since(start))
		s.logRequest(r, lw, time.Since(start), err)
		if !aborted { // a cut-off download is no fetch for the index
			s.fetches.record(r, s.servedPath(r), lw.code(), lw.written, time.Now())
		}
	}()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		lw.Header().Set("Allow", "GET, HEAD")
		http.Error(lw, r.Method+" is not allowed: this server only answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	err = s.serve(lw, r)
	if errors.Is(err, ErrSourceChanged) {
		if lw.wroteHeader {
			// Close the connection (reset the stream) without completing the body: the
			// client sees a truncated transfer, never the mixed bytes as a whole. The
			// deferred access log line says why.
			aborted = true
			panic(http.ErrAbortHandler)
		}
		err = &statusError{status: http.StatusServiceUnavailable, retryAfter: 1, err: err,
			public: "the ISO changed while this answer was being made; retry"}
	}
	var se *statusError
	if errors.As(err, &se) && !lw.wroteHeader {
		if se.retryAfter > 0 {
			lw.Header().Set("Retry-After", strconv.Itoa(se.retryAfter))
		}
		http.Error(lw, se.body(), se.status)
	}
}

// takeSlot takes one of the MaxConcurrent places for a response, released by the function it
// returns; a busy server answers 503.
func (s *Server) takeSlot() (release func(), err error) {
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem }, nil
	default:
		return nil, &statusError{status: http.StatusServiceUnavailable, retryAfter: 5,
			err: fmt.Errorf("busy: %d responses in progress, the most this server takes; retry later", cap(s.sem))}
	}
}

// statusError is an answer other than the file: its status, the error for the log and what
// the client is told.
type statusError struct {
	status int
	err    error
	// public is the response body; empty when err's text is fit for any client (it names
	// no server path, no file contents).
	public string
	// retryAfter, in seconds, is sent as Retry-After when not 0.
	retryAfter int
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func (e *statusError) body() string {
	if e.public != "" {
		return e.public
	}
	return e.err.Error()
}

func notFound(format string, args ...any) error {
	return &statusError{status: http.StatusNotFound, err: fmt.Errorf(format, args...)}
}

// failed is a 500 saying what class of problem the ISO or the node's files have, the details
// (paths, what in a file is wrong) going to the log only; or a 502 or 504 when the ISO's
// origin failed.
func failed(err error) error {
	var se *statusError
	if err == nil || errors.As(err, &se) {
		return err
	}
	if err = originStatus(err); errors.As(err, &se) {
		return err
	}
	return &statusError{status: http.StatusInternalServerError, err: err, public: "cannot serve this file: " + problemClass(err) + "; the server's log says why"}
}

// problemClass says what kind of problem err is in words fit for any client: no path, no
// file contents, nothing of a node's config (which is a secret).
func problemClass(err error) string {
	var tooLarge *isobuilder.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return "the node's config is too large for the ISO's Ignition area"
	case errors.Is(err, isobuilder.ErrNoNetworkSupport):
		return "the ISO cannot carry the node's network keyfiles"
	case errors.Is(err, isobuilder.ErrCustomized):
		return "the ISO already carries customizations"
	case errors.Is(err, input.ErrNotRegular), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return "a file of the node cannot be read"
	}
	return "the node's files or the ISO cannot be used"
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) error {
	iso, err := s.acquireISO()
	if err != nil {
		return failed(err)
	}
	defer s.releaseISO(iso)
	if r.URL.Path == "/" {
		release, err := s.takeSlot()
		if err != nil {
			return err
		}
		defer release()
		return s.serveIndex(w, r, iso)
	}
	a, err := s.resolve(r, iso)
	if err != nil {
		return failed(err)
	}
	// A node's grown ISO is closed once the node was replaced and no request reads it: hold
	// it, resolving again when the node was replaced in between.
	for !a.file.hold() {
		if a, err = s.resolve(r, iso); err != nil {
			return failed(err)
		}
	}
	defer a.file.release()
	// The place is taken once the artifact is ready: waiting for a node's preparation or a
	// build takes none from the other nodes' responses.
	release, err := s.takeSlot()
	if err != nil {
		return err
	}
	defer release()
	return serveArtifact(w, r, a, s.cfg.WriteTimeout)
}

// resolve maps a path to the artifact it names.
func (s *Server) resolve(r *http.Request, iso *isoState) (*artifact, error) {
	p := r.URL.Path
	if p == "/"+isobuilder.PXERootfs {
		return iso.pxeArtifact(isobuilder.PXERootfs)
	}
	if s.secret != nil {
		var err error
		if p, err = s.authorize(p); err != nil {
			return nil, err
		}
	}
	first, file, nested := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !nested {
		stem, ok := strings.CutSuffix(first, ".iso")
		if !ok {
			return nil, notFound("%s: not found; the ISOs are /<node>.iso and /<node>-minimal.iso (see / for the list)", p)
		}
		name, minimal := strings.CutSuffix(stem, capability.MinimalSuffix)
		ns, err := s.node(r.Context(), iso, name)
		if err != nil {
			return nil, err
		}
		if !minimal {
			a, err := ns.fullISO()
			return s.grownIfNeeded(r, ns, a, err, "")
		}
		return s.minimalISO(r, ns)
	}
	switch file {
	case isobuilder.PXEKernel, isobuilder.PXERootfs, isobuilder.PXEInitramfs, node.IPXEConfig:
	default:
		return nil, notFound("%s: not found; a node's network-boot files are %s, %s, %s and %s", p, isobuilder.PXEKernel, isobuilder.PXEInitramfs, isobuilder.PXERootfs, node.IPXEConfig)
	}
	if !s.listed(first) {
		return nil, s.unknownNode(first)
	}
	switch file {
	case isobuilder.PXEKernel, isobuilder.PXERootfs:
		// The same for every node: no need to prepare this one.
		return iso.pxeArtifact(file)
	}
	ns, err := s.node(r.Context(), iso, first)
	if err != nil {
		return nil, err
	}
	if file == isobuilder.PXEInitramfs {
		return ns.initramfs()
	}
	base, err := s.baseURL(r)
	if err != nil {
		return nil, err
	}
	return ns.bootIPXE(base + s.nodePrefix(ns.name))
}

func (s *Server) minimalISO(r *http.Request, ns *nodeState) (*artifact, error) {
	url := ns.node.Output.RootfsURL
	if url == "" {
		if s.cfg.BaseURL == "" {
			return nil, &statusError{status: http.StatusInternalServerError, err: fmt.Errorf("node %s: a minimal ISO needs the URL its live system fetches the root file system from, and the server does not know its own: give the server its base URL as the node reaches it, or set output.rootfsURL in the node's sno.yaml", ns.name)}
		}
		url = s.cfg.BaseURL + "/" + isobuilder.PXERootfs
	}
	a, err := s.nodeMinimalISO(r.Context(), ns, url)
	return s.grownIfNeeded(r, ns, a, err, url)
}

// baseURL is the server's URL as nodes reach it: the configured one, else the Host the
// request was sent to (iPXE runs on the node itself, so that address works for it).
func (s *Server) baseURL(r *http.Request) (string, error) {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL, nil
	}
	if !validHost(r.Host) {
		return "", &statusError{status: http.StatusBadRequest, err: fmt.Errorf("the request's Host %q is not a host name or address with an optional port; give the server its base URL", r.Host)}
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return scheme + r.Host, nil
}

func validHost(host string) bool {
	if host == "" || len(host) > 255 {
		return false
	}
	return strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]%") == ""
}

// listed reports whether name is a node of the nodes directory, re-reading the directory
// when it changed.
func (s *Server) listed(name string) bool {
	return capability.ValidNodeName(name) && s.listing().has(name)
}

func (s *Server) listing() *listing {
	st := filestamp.Of(s.cfg.NodesDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil || !st.Same(s.list.stamp) {
		s.list = readListing(s.cfg.NodesDir)
		for name := range s.nodes {
			if !s.list.has(name) {
				if ns := s.nodes[name].cur.Load(); ns != nil {
					ns.retire()
				}
				delete(s.nodes, name)
			}
		}
	}
	return s.list
}

func (s *Server) unknownNode(name string) error {
	return notFound("no node %q: the nodes are the subdirectories of the nodes directory (see / for the list)", name)
}

// node returns the node's preparation against iso, preparing it again when its files
// changed; a node whose files are broken is an error naming the problem, and one whose
// preparation takes longer than Config.PrepareTimeout a 503.
func (s *Server) node(ctx context.Context, iso *isoState, name string) (*nodeState, error) {
	if !s.listed(name) {
		return nil, s.unknownNode(name)
	}
	s.mu.Lock()
	e := s.nodes[name]
	if e == nil {
		e = &nodeEntry{}
		s.nodes[name] = e
	}
	s.mu.Unlock()
	ns := e.cur.Load()
	if ns == nil || !ns.fresh(iso) {
		var err error
		if ns, err = s.prepared(ctx, e, iso, name); err != nil {
			return nil, err
		}
	}
	if ns.err != nil {
		return nil, fmt.Errorf("node %s: %w", name, ns.err)
	}
	return ns, nil
}

// prepared waits for the node's preparation against iso, starting it when none is in
// progress: one at a time per node, whatever the number of requests waiting for it. It runs
// apart from the requests, so that one that never ends (a file system that does not answer)
// holds up nothing but this node's requests, each for at most the time limit.
func (s *Server) prepared(ctx context.Context, e *nodeEntry, iso *isoState, name string) (*nodeState, error) {
	for {
		ns, err := s.joinPreparation(ctx, e, iso, name)
		// A preparation started against an ISO since replaced serves nobody who holds the new
		// one (its ISO may be closed by now): prepare again against ours.
		if err != nil || ns.iso == iso {
			return ns, err
		}
	}
}

// joinPreparation waits for the node's preparation in progress, or starts one against iso.
func (s *Server) joinPreparation(ctx context.Context, e *nodeEntry, iso *isoState, name string) (*nodeState, error) {
	e.mu.Lock()
	if ns := e.cur.Load(); ns != nil && ns.fresh(iso) {
		e.mu.Unlock()
		return ns, nil
	}
	p := e.preparing
	if p == nil {
		p = &preparation{done: make(chan struct{})}
		p.deadline, p.cancel = context.WithTimeout(s.ctx, s.cfg.PrepareTimeout)
		e.preparing = p
		go func() {
			defer p.cancel()
			ns := prepareNode(name, filepath.Join(s.cfg.NodesDir, name), iso, s.prepare)
			e.mu.Lock()
			old := e.cur.Swap(ns)
			e.preparing = nil
			e.mu.Unlock()
			if old != nil {
				old.retire()
			}
			s.logPrepared(ns)
			p.ns = ns
			close(p.done)
		}()
	}
	e.mu.Unlock()
	select {
	case <-p.done:
		return p.ns, nil
	case <-p.deadline.Done():
		select {
		case <-p.done: // it ended with its deadline
			return p.ns, nil
		default:
		}
		err := fmt.Errorf("node %s: its preparation has taken more than %v: are its files on a file system that does not answer?", name, s.cfg.PrepareTimeout)
		p.timedOut.Do(func() { s.log.Printf("%v", err) })
		return nil, &statusError{status: http.StatusServiceUnavailable, err: err, retryAfter: 30,
			public: "this node's files are still being read, for longer than they should take; retry later"}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Server) logPrepared(ns *nodeState) {
	s.metrics.prepared(ns.err)
	if ns.err != nil {
		s.log.Printf("node %s: cannot be served: %v", ns.name, ns.err)
		return
	}
	for _, w := range ns.node.Warnings {
		s.log.Printf("node %s: warning: %s", ns.name, w)
	}
}

// acquireISO returns the current ISO, parsed again first if the file changed, and holds it
// until releaseISO.
func (s *Server) acquireISO() (*isoState, error) {
	st := filestamp.Of(s.cfg.ISO)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.iso == nil {
		return nil, errors.New("the server is shutting down")
	}
	// A file that disappeared is still open: keep serving it.
	if st.Exists() && !st.Same(s.iso.stamp) && !st.Same(s.badStamp) {
		next, err := openISO(s.cfg.ISO, s.cfg.Origin)
		if err != nil {
			s.isoErr, s.badStamp = fmt.Errorf("%w; it changed while being served: put the pristine ISO back", err), st
			s.log.Printf("%v", s.isoErr)
		} else {
			s.log.Printf("%s changed: serving the new version", s.cfg.ISO)
			s.retireLocked(s.iso)
			s.iso, s.isoErr, s.badStamp = next, nil, filestamp.Stamp{}
		}
	}
	if s.isoErr != nil && st.Same(s.badStamp) {
		return nil, s.isoErr
	}
	if s.iso.object != nil && s.iso.object.Changed() {
		if err := s.reopenOriginLocked(); err != nil {
			return nil, err
		}
	}
	s.iso.refs++
	return s.iso, nil
}

func (s *Server) releaseISO(iso *isoState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	iso.refs--
	if iso.retired && iso.refs == 0 {
		s.closeLater(iso)
	}
}

// retireLocked marks iso as replaced; it is closed when its last request ends.
func (s *Server) retireLocked(iso *isoState) {
	iso.retired = true
	if iso.refs == 0 {
		s.closeLater(iso)
	}
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

// closeLater closes iso in the background: it may wait for a minimal ISO being made.
func (s *Server) closeLater(iso *isoState) {
	s.closing.Add(1)
	go func() {
		defer s.closing.Done()
		iso.close()
	}()
}

// logWriter records the status and body size of a response for the access log, and keeps
// the ResponseWriter's ReadFrom, through which file spans reach sendfile.
type logWriter struct {
	http.ResponseWriter
	status      int
	written     int64
	wroteHeader bool
	// writeTimeout bounds the first writes of every response; the body writer extends it
	// chunk by chunk. It also replaces the deadline an earlier response left on a kept-alive
	// connection.
	writeTimeout time.Duration
}

func (w *logWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
		if w.writeTimeout > 0 {
			http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.writeTimeout))
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *logWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *logWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := io.Copy(w.ResponseWriter, r)
	w.written += n
	return n, err
}

// code is the status sent: 200 when the handler wrote nothing else.
func (w *logWriter) code() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the connection, for write deadlines.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes the access log line: client, request, status, body bytes, duration,
// the Range asked for, and what went wrong.
func (s *Server) logRequest(r *http.Request, w *logWriter, d time.Duration, err error) {
	line := fmt.Sprintf("%s %q %d %d %v", r.RemoteAddr, r.Method+" "+s.loggedURI(r)+" "+r.Proto, w.code(), w.written, d.Round(time.Microsecond))
	if rg := r.Header.Get("Range"); rg != "" {
		line += " range=" + fmt.Sprintf("%q", rg)
	}
	if err != nil {
		line += " error=" + fmt.Sprintf("%q", err.Error())
	}
	s.log.Print(line)
}
