package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/origin"
)

// isURL reports whether the ISO is named by an http(s) or s3:// URL rather than a path.
func isURL(iso string) bool { return origin.IsURL(iso) }

// openOriginISO parses the ISO at an origin URL from a few range reads. Its identity and
// Last-Modified come from its bytes, as for a file: the same on every replica serving the same
// ISO, whether from a file or any origin. The origin's validators pin the version read
// (origin.Object), they do not name the content.
func openOriginISO(ctx context.Context, rawURL string, opts origin.Options) (*isoState, error) {
	obj, err := origin.Open(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	iso, err := isobuilder.OpenReader(obj, obj.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", obj, err)
	}
	id, err := isoIdentity(iso)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", obj, err)
	}
	file, err := newSourceFile(obj, id)
	if err != nil {
		return nil, err
	}
	return &isoState{path: obj.String(), modTime: volumeTime(iso), iso: iso, file: file, object: obj}, nil
}

// originStatus turns a failed origin request into the gateway's answer: 504 when the origin
// did not answer in time, else 502. Other errors are returned as they are.
func originStatus(err error) error {
	var oe *origin.Error
	if !errors.As(err, &oe) {
		return err
	}
	// The origin's URL may carry credentials (a presigned URL): the log has it, not the client.
	if oe.Timeout() {
		return &statusError{status: http.StatusGatewayTimeout, err: err,
			public: "the ISO's origin did not answer in time; the server's log says more"}
	}
	return &statusError{status: http.StatusBadGateway, err: err, public: "the ISO's origin failed; the server's log says why"}
}

// openFirstSpan asks the origin for the first bytes the response will send before the
// response promises any: an origin that fails now gets the client a 502 or 504, not a
// truncated body. A long span stays open for copyFile, unless the local copy under way has
// its first bytes or writes them within the origin's idle timeout; a short one is now in the
// cache.
func (bw *bodyWriter) openFirstSpan(ctx context.Context, a *artifact, off, n int64) error {
	bw.ctx = ctx
	if bw.file == nil {
		return nil
	}
	obj, ok := bw.file.f.(*origin.Object)
	if !ok {
		return nil
	}
	end := off + n
	for _, p := range a.parts {
		if p.data != nil || p.start+p.size <= off || p.start >= end {
			continue
		}
		from, to := max(off, p.start)-p.start, min(end, p.start+p.size)-p.start
		if to-from < sendfileMin {
			_, err := obj.ReadAt(make([]byte, 1), p.fileOff+from)
			return originStatus(err)
		}
		if c := bw.followed(); c != nil {
			// The copy under way may give these bytes: then the origin is not asked. The
			// response holds the copy, whose written bytes stay readable even if it ends short.
			if k, err := c.await(ctx, p.fileOff+from); err != nil || k > 0 {
				return err
			}
		}
		body, err := obj.Range(ctx, p.fileOff+from, to-from)
		if err != nil {
			return originStatus(err)
		}
		bw.pending, bw.pendingOff = body, p.fileOff+from
		return nil
	}
	return nil
}

// copyOrigin streams n bytes at off from the origin to the client, or from the local copy
// under way as far as it can follow it. An origin that fails mid-way fails the response,
// whose Content-Length then tells the client it is incomplete.
func (bw *bodyWriter) copyOrigin(obj *origin.Object, off, n int64) error {
	body := bw.pending
	if body == nil || bw.pendingOff != off {
		if c := bw.followed(); c != nil {
			sent, err := bw.followCopy(c, off, n)
			if err != nil || sent == n {
				return err
			}
			off, n = off+sent, n-sent
		}
		var err error
		if body, err = obj.Range(bw.ctx, off, n); err != nil {
			return err
		}
	} else {
		bw.pending = nil
	}
	defer body.Close()
	for n > 0 {
		chunk := min(n, writeChunk)
		bw.extendDeadline()
		// Through the logWriter, so that the access log counts the bytes, and to its
		// ReadFrom, through which the kernel splices the origin's bytes to the client.
		copied, err := body.CopyTo(bw.w, chunk)
		if err != nil {
			return err
		}
		n -= copied
	}
	return nil
}

// reopenOriginLocked retires the version the origin replaced (closed when its last request
// ends) and opens the new one in the background, as at start: the server is not ready and
// answers 503 with Retry-After until it is open. The origin is not read here: s.mu is held,
// and every request, probe and access-log line would wait on it.
func (s *Server) reopenOriginLocked() error {
	s.log.Printf("%s changed at the origin: opening the new version", s.iso.path)
	s.retireLocked(s.iso)
	// The new version has copied nothing yet, whether or not it ever starts a copy.
	s.metrics.originCopyBytes.Set(0)
	s.iso = nil
	s.opening = &originOpening{changed: true, attempted: make(chan struct{})}
	s.closing.Add(1)
	go s.openOrigin(nil, nil, 0)
	return reopenStarted{s.opening.unavailable()}
}
