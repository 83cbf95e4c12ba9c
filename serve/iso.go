package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/origin"
)

// isoState is one version of the base ISO, parsed once. Requests hold a reference while
// they use it; when the file at the ISO path changes, a new isoState replaces it, and the
// old one is closed once its last request is done.
type isoState struct {
	path  string
	stamp filestamp.Stamp // of a local file; zero for an origin
	// modTime is every artifact's Last-Modified: from the content, never from a clock.
	modTime time.Time
	iso     *isobuilder.LiveISO
	file    *sourceFile
	object  *origin.Object // nil for a local file
	// fromCopy says this version is read from the local copy of the object at its origin.
	fromCopy bool
	// stopCopy ends the copy of this version from its origin when it retires; nil when none runs.
	stopCopy context.CancelFunc

	refs    int  // guarded by Server.mu
	retired bool // guarded by Server.mu

	pxeOnce      sync.Once
	pxeArtifacts map[string]*artifact // the ISO's PXE files as they are
	pxeErr       error

	initramfsOnce sync.Once
	// initramfsErr says the stock initramfs cannot be customized at all.
	initramfsErr error
	initramfs    *node.StockInitramfs

	minimal flights[*minimalBase] // by rootfs URL
}

// openISO opens and parses the ISO at path, or at an http(s) URL through its origin (until
// ctx ends). It must be pristine, as for build: every node's media are its customization of
// the stock ISO.
func openISO(ctx context.Context, path string, opts origin.Options) (*isoState, error) {
	var s *isoState
	var err error
	if isURL(path) {
		s, err = openOriginISO(ctx, path, opts)
	} else {
		s, err = openFileISO(path)
	}
	if err != nil {
		return nil, err
	}
	if err := s.iso.CheckPristine(); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

func openFileISO(path string) (*isoState, error) {
	st := filestamp.Of(path)
	iso, err := isobuilder.Open(path)
	if err != nil {
		return nil, err
	}
	id, err := isoIdentity(iso)
	if err == nil {
		var file *sourceFile
		if file, err = newSourceFile(iso.Base(), id); err == nil {
			return &isoState{path: path, stamp: st, modTime: volumeTime(iso), iso: iso, file: file}, nil
		}
	}
	iso.Close()
	return nil, fmt.Errorf("%s: %w", path, err)
}

// close releases the ISO and removes the minimal ISOs made from it; only when no request
// uses it any more.
func (s *isoState) close() {
	for _, f := range s.minimal.all() {
		if m, err := f.wait(context.Background()); err == nil {
			m.derived.Close()
		}
	}
	s.iso.Close()
	// Swap: a copy that ends short lets go of it too (copyOrigin), and only one of them may.
	if c := s.file.local.Swap(nil); c != nil {
		c.release()
	}
}

// acquireISO returns the current ISO, parsed again first if the file changed, and holds it
// until releaseISO.
func (s *Server) acquireISO() (*isoState, error) {
	st := filestamp.Of(s.cfg.ISO)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.iso == nil {
		if s.opening != nil && !s.closed {
			if s.opening.reopening() {
				return nil, reopenStarted{s.opening.unavailable()}
			}
			return nil, s.opening.unavailable()
		}
		return nil, errors.New("the server is shutting down")
	}
	// A file moved or removed cannot be served as it was opened (the rename or unlink
	// changed its version), and a restart would not find it: say so until it is back.
	if s.iso.object == nil && !st.Exists() {
		return nil, &statusError{status: http.StatusServiceUnavailable, retryAfter: 30,
			err:    fmt.Errorf("the ISO %s is gone (moved or removed) while being served: put it back", s.cfg.ISO),
			public: "the server's ISO is missing; the server's log says more"}
	}
	if st.Exists() && !st.Same(s.iso.stamp) && !st.Same(s.badStamp) {
		next, err := openISO(s.ctx, s.cfg.ISO, s.cfg.Origin)
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
	if iso.stopCopy != nil {
		iso.stopCopy()
	}
	if iso.refs == 0 {
		s.closeLater(iso)
	}
}

// closeLater closes iso in the background: it may wait for a minimal ISO being made.
func (s *Server) closeLater(iso *isoState) {
	s.closing.Add(1)
	go func() {
		defer s.closing.Done()
		iso.close()
	}()
}
