package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
	"github.com/sno-iso/sno-iso/origin"
)

// An ISO given by URL is opened in the background: an origin that is down, slow or refusing
// leaves the server running and not ready (a store's blip during a rollout must not become
// a crash loop), and the server becomes ready when the origin answers.
const (
	// originStartWait bounds how long New waits for the origin's first answer.
	originStartWait = 10 * time.Second
	// originRetryBase and originRetryLimit bound the back-off between attempts; a
	// readiness probe asks for an attempt sooner, but not within originRetryBase of the last.
	originRetryBase  = time.Second
	originRetryLimit = time.Minute
)

// originOpening is why the ISO at its origin is not open yet. Guarded by Server.mu.
type originOpening struct {
	err      error     // of the last attempt; nil while the first one runs
	failures int       // attempts failed in a row
	next     time.Time // when the next attempt starts
	changed  bool      // the origin replaced the version that was open
	// attempted is closed once the first attempt ended (nil at start): the request that
	// found the new version waits for it, outside Server.mu.
	attempted chan struct{}
}

// errReopenStarted marks the answer of a request that found the ISO replaced at its origin
// while the first attempt at opening the new version runs: it waits for that attempt
// (awaitReopen) and asks again.
var errReopenStarted = errors.New("started opening the new version")

// reopenStarted is the 503 of such a request: its text is the 503's, and it is
// errReopenStarted too.
type reopenStarted struct{ err error }

func (e reopenStarted) Error() string        { return e.err.Error() }
func (e reopenStarted) Unwrap() error        { return e.err }
func (e reopenStarted) Is(target error) bool { return target == errReopenStarted }

// ErrOriginNotOpen says the ISO's origin has not answered with a servable ISO yet.
var ErrOriginNotOpen = errors.New("the ISO at its origin is not open yet")

// unavailable is the answer to a request for media while the ISO is not open: 503, to retry
// when the next attempt is due.
func (o *originOpening) unavailable() error {
	err := fmt.Errorf("%w: opening it (first attempt)", ErrOriginNotOpen)
	if o.changed {
		err = fmt.Errorf("%w: it changed at its origin; opening the new version", ErrOriginNotOpen)
	}
	if o.err != nil {
		err = fmt.Errorf("%w (attempt %d failed, next in %s): %w", ErrOriginNotOpen, o.failures,
			max(time.Until(o.next), 0).Round(time.Second), o.err)
	}
	wait := math.Ceil(time.Until(o.next).Seconds())
	return &statusError{status: http.StatusServiceUnavailable, err: err,
		retryAfter: int(min(max(wait, 1), originRetryLimit.Seconds())),
		public:     "the server's ISO is not available yet (its origin has not served it); retry later"}
}

// misconfiguredOrigin reports whether err says the origin can never serve the ISO as it is
// (the URL, a server without Range or validators, no region or the wrong one for s3://): at
// start that is the user's mistake to fix by redeploying, not a blip to wait out. Refused credentials, a missing object or an
// unreachable store may be put right while the server waits.
func misconfiguredOrigin(err error) bool {
	for _, mistake := range []error{origin.ErrNotHTTP, origin.ErrNoRanges, origin.ErrNoValidator, origin.ErrNoRegion,
		origin.ErrWrongRegion} {
		if errors.Is(err, mistake) {
			return true
		}
	}
	return false
}

// startOrigin opens the ISO at its origin in the background and waits for the first attempt,
// at most originStartWait: a misconfigured origin is New's error, any other failure leaves
// the server not ready while the attempts go on.
func (s *Server) startOrigin() error {
	first, waited := make(chan error), make(chan struct{})
	s.opening = &originOpening{}
	s.closing.Add(1)
	go s.openOrigin(first, waited, 0)
	t := time.NewTimer(originStartWait)
	defer t.Stop()
	select {
	case err := <-first:
		if err != nil && misconfiguredOrigin(err) {
			return err
		}
	case <-t.C:
		close(waited)
		s.log.Printf("not ready: the ISO's origin has not answered in %s; still trying", originStartWait)
	}
	return nil
}

// openOrigin attempts to open the ISO, after wait, until one attempt succeeds or the server
// closes, with bounded exponential back-off between attempts. The first attempt's outcome
// goes to first, when given, unless startOrigin stopped waiting (waited closed). Each new
// reason is logged once, not at every attempt or probe.
func (s *Server) openOrigin(first chan<- error, waited <-chan struct{}, wait time.Duration) {
	defer s.closing.Done()
	s.mu.Lock()
	attempted := s.opening.attempted
	s.mu.Unlock()
	endAttempt := sync.OnceFunc(func() {
		if attempted != nil {
			close(attempted)
		}
	})
	defer endAttempt() // on success, once s.iso is set
	for attempt := 0; ; attempt++ {
		if wait > 0 && !s.waitOriginRetry(wait) {
			return
		}
		iso, err := s.attemptOrigin()
		if err == nil {
			s.mu.Lock()
			closed, changed := s.closed, s.opening.changed
			if !closed {
				s.iso, s.opening = iso, nil
			}
			s.mu.Unlock()
			s.metrics.setOriginCheckOK(true)
			switch {
			case closed:
				iso.close()
			case attempt == 0 && tell(first, waited, nil):
			case changed:
				s.log.Printf("ready: %s changed at the origin: serving the new version", iso.path)
			default:
				s.log.Printf("ready: %s answers now", iso.path)
			}
			s.startCopy(iso)
			return
		}
		// New returns a misconfigured origin's error: nothing to retry or log.
		if attempt == 0 && tell(first, waited, err) && misconfiguredOrigin(err) {
			return
		}
		s.mu.Lock()
		if s.closed || s.ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		o := s.opening
		if o.changed {
			err = fmt.Errorf("the ISO changed at its origin and the new version cannot be served: %w", err)
		}
		logged := o.err != nil && o.err.Error() == err.Error()
		o.failures++
		wait = httpsem.Backoff(originRetryBase, originRetryLimit, o.failures)
		o.err, o.next = err, time.Now().Add(wait)
		s.mu.Unlock()
		s.metrics.setOriginCheckOK(false)
		endAttempt()
		if !logged {
			s.log.Printf("not ready: %v; trying again, at most %s apart and sooner at readiness probes", err, originRetryLimit)
		}
	}
}

// tell gives err to a startOrigin still waiting; false when it stopped waiting or there is
// none (first is nil).
func tell(first chan<- error, waited <-chan struct{}, err error) bool {
	if first == nil {
		return false
	}
	select {
	case first <- err:
		return true
	case <-waited:
		return false
	}
}

// attemptOrigin opens the ISO at its origin once; a timeout says how long the origin had.
func (s *Server) attemptOrigin() (*isoState, error) {
	iso, err := openISO(s.ctx, s.cfg.ISO, s.cfg.Origin)
	var oe *origin.Error
	if errors.As(err, &oe) && oe.Timeout() && s.ctx.Err() == nil {
		err = fmt.Errorf("%w: the origin did not answer within %s", err, s.cfg.Origin.Idle())
	}
	return iso, err
}

// waitOriginRetry waits wait, or less when a readiness probe asks (but originRetryBase at
// least); false when the server closes.
func (s *Server) waitOriginRetry(wait time.Duration) bool {
	start := time.Now()
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return false
		case <-t.C:
			return true
		case <-s.originWake:
			wait = min(wait, originRetryBase)
			t.Reset(time.Until(start.Add(wait)))
		}
	}
}

// wakeOrigin asks a waiting opener for an attempt now; nothing when none waits.
func (s *Server) wakeOrigin() {
	select {
	case s.originWake <- struct{}{}:
	default:
	}
}

// reopenWait bounds how long a request waits for the first attempt at opening the version
// that replaced the ISO at its origin. A reopen takes a few range reads: requests that wait
// for it get the new version instead of a 503, which a load balancer would count against
// every replica at once; an origin slower than this gets them a 503 with Retry-After.
const reopenWait = 5 * time.Second

// reopening reports whether the first attempt at opening a version that replaced the open one
// is still under way.
func (o *originOpening) reopening() bool {
	if !o.changed || o.attempted == nil {
		return false
	}
	select {
	case <-o.attempted:
		return false
	default:
		return true
	}
}

// awaitReopen waits, at most reopenWait and until ctx ends, for the first attempt at opening
// a version that replaced the ISO at its origin; it starts that attempt if none did yet.
// Server.mu is not held while waiting.
func (s *Server) awaitReopen(ctx context.Context) {
	if iso, err := s.acquireISO(); err == nil {
		s.releaseISO(iso)
		return
	}
	s.mu.Lock()
	var attempted chan struct{}
	if s.opening != nil {
		attempted = s.opening.attempted
	}
	s.mu.Unlock()
	if attempted == nil {
		return
	}
	timer := time.NewTimer(reopenWait)
	defer timer.Stop()
	select {
	case <-attempted:
	case <-ctx.Done():
	case <-timer.C:
	}
}
