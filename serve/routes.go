package serve

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/sno-iso/sno-iso/progress"
)

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
	report := s.reports != nil && progress.IsReportPath(r.URL.Path)
	aborted := report // a report is no fetch for the index
	s.metrics.inFlight.Inc()
	defer func() {
		s.metrics.inFlight.Dec()
		s.metrics.observeRequest(r.URL.Path, lw.code(), lw.written, time.Since(start))
		s.logRequest(r, lw, time.Since(start), err)
		if !aborted { // a cut-off download is no fetch for the index
			s.fetches.record(r, s.servedPath(r), lw.code(), lw.written, time.Now())
		}
	}()
	if report {
		s.serveReport(lw, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		lw.Header().Set("Allow", "GET, HEAD")
		http.Error(lw, r.Method+" is not allowed: this server only answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	err = s.serve(lw, r)
	if (errors.Is(err, origin.ErrChanged) || errors.Is(err, errReopenStarted)) && !lw.wroteHeader {
		// This request found the object replaced at the origin before it sent a byte: answer
		// from the new version, opened in the background, rather than fail the client.
		s.awaitReopen(r.Context())
		err = s.serve(lw, r)
	}
	if errors.Is(err, ErrSourceChanged) || errors.Is(err, origin.ErrChanged) {
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

// slotClass is a class of responses with places of their own: clients without a token,
// reading the public files slowly, cannot take the places of the nodes' own URLs.
type slotClass int

const (
	nodeClass   slotClass = iota // a node's files
	publicClass                  // /rootfs.img and the index, which anyone may ask for
)

// classOf is the class of the response to the request for path.
func classOf(path string) slotClass {
	if path == "/" || path == "/"+isobuilder.PXERootfs {
		return publicClass
	}
	return nodeClass
}

// takeSlot takes one of the MaxConcurrent places of class for a response, released by the
// function it returns; a class with none free answers 503.
func (s *Server) takeSlot(class slotClass) (release func(), err error) {
	sem := s.sem
	if class == publicClass {
		sem = s.publicSem
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
		return nil, &statusError{status: http.StatusServiceUnavailable, retryAfter: 5,
			err: fmt.Errorf("busy: %d responses of this kind in progress, the most this server takes; retry later", cap(sem))}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) error {
	iso, err := s.acquireISO()
	if err != nil {
		return failed(err)
	}
	defer s.releaseISO(iso)
	if r.URL.Path == "/" {
		release, err := s.takeSlot(publicClass)
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
	release, err := s.takeSlot(classOf(r.URL.Path))
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
			return s.nodeISO(r.Context(), ns, "")
		}
		return s.minimalISO(r, ns)
	}
	switch file {
	case isobuilder.PXEKernel, isobuilder.PXERootfs, isobuilder.PXEInitramfs, node.IPXEConfig:
	default:
		return nil, notFound("%s: not found; a node's network-boot files are %s, %s, %s and %s",
			p, isobuilder.PXEKernel, isobuilder.PXEInitramfs, isobuilder.PXERootfs, node.IPXEConfig)
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

// baseURL is the server's URL as nodes reach it: the configured one, else the Host the
// request was sent to (iPXE runs on the node itself, so that address works for it).
func (s *Server) baseURL(r *http.Request) (string, error) {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL, nil
	}
	if !validHost(r.Host) {
		return "", &statusError{status: http.StatusBadRequest,
			err: fmt.Errorf("the request's Host %q is not a host name or address with an optional port; give the server its base URL", r.Host)}
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
