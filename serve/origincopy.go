package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/origin"
)

// An ISO given by URL is copied to local disk (Config.ISOCopyDir) once per version opened,
// in the background, and served from the copy once it is complete and checked: the store is
// read once per replica and version instead of once per download, and responses go out by
// sendfile as from a local file. Until then, and whenever the copy cannot be made, the
// origin serves. The copy keeps the version's identity and dates, so ETags and Last-Modified
// do not change when it takes over.
const (
	// copySpanSize is what each Range GET of the copy asks for: a 1.2 GiB ISO in 19 requests.
	copySpanSize = 64 << 20
	// copyBufferSize is the copy's one buffer: its memory does not grow with the ISO.
	copyBufferSize = 256 << 10
	// copyHeadroom is the least free space the copy leaves beside it; it leaves an eighth of
	// the ISO's size when that is more (copyRoom). Minimal and grown ISOs are made in
	// Config.TempDir, often the same file system: a minimal ISO is about a tenth of the ISO, a
	// grown one its full size, so a disk shared with many grown ISOs needs room of its own.
	copyHeadroom = 64 << 20
)

// errCopyStale says that the version copied was replaced or the server closed before the
// copy could take over.
var errCopyStale = errors.New("the version copied is no longer the one served")

// errCopyMismatch says that the copy's bytes do not name the version opened.
var errCopyMismatch = errors.New("the copy's bytes are not those of the version opened")

// startCopy starts copying iso, just opened at its origin, unless no copy is wanted or iso
// is no longer the version served.
func (s *Server) startCopy(iso *isoState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.ISOCopyDir == "" || s.closed || s.iso != iso || iso.retired {
		return
	}
	var ctx context.Context
	ctx, iso.stopCopy = context.WithCancel(s.ctx)
	s.closing.Add(1)
	go s.copyRetrying(ctx, iso)
}

// copyOrigin copies iso from its origin to an unlinked file in Config.ISOCopyDir and serves
// it from there once complete; otherwise the origin serves on, and it says why: in the log,
// or by returning the error of a copy that may succeed later (no room, a failed write). It
// ends when ctx does (iso retired, or the server closed).
func (s *Server) copyOrigin(ctx context.Context, iso *isoState) error {
	obj, dir := iso.object, s.cfg.ISOCopyDir
	start := time.Now()
	s.metrics.originCopyBytes.Set(0)
	f, inRAM, err := createCopy(dir, obj.Size())
	if err != nil {
		return fmt.Errorf("not copying %s to local disk: %w", obj, err)
	}
	if inRAM {
		s.log.Printf("%s is a tmpfs: the copy takes %d bytes of memory; copy to a directory on disk instead", dir, obj.Size())
	}
	c, err := newLocalCopy(f, obj.Size(), s.cfg.Origin.Idle())
	if err != nil {
		f.Close()
		return fmt.Errorf("not copying %s to local disk: %w", obj, err)
	}
	s.publishCopy(iso, c)
	s.log.Printf("copying %s (%d bytes) to %s, to serve it from there once complete", obj, obj.Size(), dir)
	err = s.fillCopy(ctx, obj, c)
	if err == nil {
		// On success the copy's own hold passes to the version read from it (released when
		// that version closes).
		err = s.serveCopy(iso, c)
	}
	c.end(err == nil)
	if err == nil {
		s.log.Printf("serving %s from the local copy: %d bytes in %s", obj, obj.Size(), time.Since(start).Round(time.Millisecond))
		return nil
	}
	// The version lets go of a copy that ended short (readers under way hold it, tryHold) and
	// reads its origin: the file's space is freed once they are done.
	if iso.file.local.CompareAndSwap(c, nil) {
		c.release()
	}
	c.release()
	if ctx.Err() == nil { // a copy stopped for a new version's leaves the gauge to it
		s.metrics.originCopyBytes.Set(0)
	}
	var digest *origin.DigestError
	switch {
	case errors.As(err, &digest):
		s.log.Printf("ERROR: the copy of %v; the copy was dropped, serving it from its origin", err)
	case errors.Is(err, errCopyMismatch):
		s.log.Printf("ERROR: the copy of %s: %v; the copy was dropped, serving it from its origin", obj, err)
	case obj.Changed():
		s.log.Printf("the copy of %s stopped: the object changed at its origin (the new version is copied once open)", obj)
	case ctx.Err() != nil || errors.Is(err, errCopyStale):
		// Replaced or shutting down: the new version, if any, has a copy of its own.
	default:
		return fmt.Errorf("the copy of %s failed: %w", obj, err)
	}
	return nil
}

// publishCopy lets the responses of iso follow its copy c as it grows; iso then holds c open
// until it is closed, or until the copy ends short. A version already replaced has no more
// responses to come.
func (s *Server) publishCopy(iso *isoState, c *localCopy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !iso.retired {
		c.hold()
		iso.file.local.Store(c)
	}
}

// createCopy makes the unlinked file of a copy of size bytes in dir, after checking that dir
// has room for it; inRAM says that dir is a tmpfs.
func createCopy(dir string, size int64) (f *os.File, inRAM bool, err error) {
	free, inRAM, err := dirSpace(dir)
	if err != nil {
		return nil, false, err
	}
	if room := copyRoom(size); free >= 0 && free < size+room {
		return nil, false, fmt.Errorf("%s has %d bytes free, the copy needs %d (with %d to spare)", dir, free, size+room, room)
	}
	if f, err = createUnlinked(dir); err != nil {
		return nil, false, err
	}
	if err := reserve(f, size); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("reserving %d bytes in %s: %w", size, dir, err)
	}
	return f, inRAM, nil
}

// copyRoom is the free space a copy of size bytes leaves beside it.
func copyRoom(size int64) int64 { return max(copyHeadroom, size/8) }

// createTempUnlinked creates a file in dir and removes its name at once: it lives as long as
// it is open.
func createTempUnlinked(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".sno-iso-copy-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fillCopy writes the object's bytes to f, a span at a time, and checks them against the
// sha256 its metadata records, if any. A span the origin fails is resumed where it stopped,
// after a bounded back-off, until ctx ends; a new version at the origin or a failed write
// ends the copy.
func (s *Server) fillCopy(ctx context.Context, obj *origin.Object, local *localCopy) error {
	f := local.file.f.(*os.File)
	c := &spanCopier{obj: obj, f: f, buf: make([]byte, copyBufferSize), copied: func(n int64) {
		local.advance(n)
		if ctx.Err() == nil { // a copy stopped for a new version's leaves the gauge to it
			s.metrics.originCopyBytes.Set(float64(n))
		}
	}}
	if obj.SHA256() != "" { // else nothing to check a hash against (http(s) origins)
		c.hash = sha256.New()
	}
	failures := 0
	for c.off < obj.Size() {
		progressed, err := c.span(ctx, min(copySpanSize, obj.Size()-c.off))
		if err == nil {
			continue
		}
		var oe *origin.Error
		if ctx.Err() != nil || obj.Changed() || !errors.As(err, &oe) {
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		wait := httpsem.Backoff(originRetryBase, originRetryLimit, failures)
		if failures == 1 {
			s.log.Printf("the copy of %s stopped at byte %d: %v; resuming it, at most %s apart", obj, c.off, err, originRetryLimit)
		}
		if err := httpsem.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	if want := obj.SHA256(); want != "" {
		if got := hex.EncodeToString(c.hash.Sum(nil)); got != want {
			return &origin.DigestError{Object: obj.String(), Want: want, Got: got}
		}
	}
	return nil
}

// spanCopier writes an object's bytes to a file in order, hashing them.
type spanCopier struct {
	obj    *origin.Object
	f      *os.File
	hash   hash.Hash // nil when nothing is checked
	buf    []byte
	off    int64 // the bytes before it are written
	copied func(int64)
}

// span copies the n bytes at c.off; progressed says whether any were.
func (c *spanCopier) span(ctx context.Context, n int64) (progressed bool, err error) {
	body, err := c.obj.Range(ctx, c.off, n)
	if err != nil {
		return false, err
	}
	defer body.Close()
	for end := c.off + n; c.off < end; {
		// Whole buffers: fewer writes, and fewer wake-ups of the responses following the copy.
		k, rerr := io.ReadFull(body, c.buf[:min(int64(len(c.buf)), end-c.off)])
		if k > 0 {
			if _, err := c.f.WriteAt(c.buf[:k], c.off); err != nil {
				return progressed, fmt.Errorf("writing the copy: %w", err)
			}
			if c.hash != nil {
				c.hash.Write(c.buf[:k])
			}
			c.off += int64(k)
			progressed = true
			c.copied(c.off)
		}
		if rerr != nil && c.off < end {
			return progressed, rerr
		}
	}
	return progressed, nil
}

// serveCopy makes the complete copy c of iso the version served, if iso still is: the same
// identity, dates and origin object (watchOrigin goes on asking the origin whether the object
// changed), read from the file, which it then holds. Requests under way finish on iso, which
// is closed after the last one.
func (s *Server) serveCopy(iso *isoState, c *localCopy) error {
	f := c.file.f.(*os.File)
	local, err := isobuilder.OpenReader(f, iso.object.Size())
	if err != nil {
		return fmt.Errorf("%w: parsing it: %w", errCopyMismatch, err)
	}
	id, err := isoIdentity(local)
	if err != nil {
		return fmt.Errorf("reading the copy: %w", err)
	}
	if id != iso.file.id {
		return fmt.Errorf("%w (identity %s, opened as %s)", errCopyMismatch, id, iso.file.id)
	}
	file, err := newSourceFile(f, id)
	if err != nil {
		return err
	}
	copied := &isoState{path: iso.path, modTime: iso.modTime, iso: local, file: file, object: iso.object, fromCopy: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.iso != iso || iso.retired {
		return errCopyStale
	}
	copied.file.local.Store(c)
	s.retireLocked(iso)
	s.iso = copied
	s.startWatchLocked(copied)
	return nil
}

// servingCopy reports whether the ISO served is read from its local copy.
func (s *Server) servingCopy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.iso != nil && s.iso.fromCopy
}
