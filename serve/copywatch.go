package serve

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
	"github.com/sno-iso/sno-iso/origin"
)

// A version served from its local copy reads nothing from its origin, so no download's
// If-Match can find it replaced: a watcher asks the origin every originCheckInterval, opens
// a new version as a readiness check would, and leaves its answer for the metrics and the
// log. Readiness does not wait on the origin then: a store that drops packets would hold
// every probe for the origin's idle timeout, and fail every replica at once.

// copyRetrying copies iso from its origin (copyOrigin), again after a bounded back-off when
// the copy may succeed later: there may be room once a replaced version's copy, held by long
// downloads, is closed. It ends when ctx does (iso retired, or the server closed); each new
// reason is logged once.
func (s *Server) copyRetrying(ctx context.Context, iso *isoState) {
	defer s.closing.Done()
	var logged string
	for failures := 1; ; failures++ {
		err := s.copyOrigin(ctx, iso)
		if err == nil || ctx.Err() != nil {
			return
		}
		if err.Error() != logged {
			s.log.Printf("%v; serving it from its origin, and trying again at most %s apart", err, originRetryLimit)
			logged = err.Error()
		}
		if httpsem.Sleep(ctx, httpsem.Backoff(originRetryBase, originRetryLimit, failures)) != nil {
			return
		}
	}
}

// startWatchLocked starts watching the origin of iso, which serves from its copy; the watcher ends
// when iso retires or the server closes. s.mu is held.
func (s *Server) startWatchLocked(iso *isoState) {
	var ctx context.Context
	ctx, iso.stopCopy = context.WithCancel(s.ctx)
	s.closing.Add(1)
	go s.watchOrigin(ctx, iso)
}

// watchOrigin checks iso's object at its origin, every originCheckInterval, until ctx ends.
func (s *Server) watchOrigin(ctx context.Context, iso *isoState) {
	defer s.closing.Done()
	every := cmp.Or(s.cfg.originWatchEvery, originCheckInterval)
	for httpsem.Sleep(ctx, every) == nil {
		err := iso.object.Check(ctx)
		if ctx.Err() != nil {
			return
		}
		if iso.object.Changed() {
			// Retiring iso ends this watcher; a new version that cannot be opened yet is
			// retried by openOrigin.
			s.openReplaced()
			return
		}
		s.originCheck.Lock()
		s.noteOriginCheckLocked(iso.object, err, true)
		s.originCheck.Unlock()
	}
}

// noteOriginCheckLocked records the origin's answer to a check of object (err, nil when it
// answered with the version opened): readiness answers from it for originCheckEvery,
// sno_iso_origin_check_ok says whether it succeeded, and the log says when the checks start
// failing and when they succeed again, not at every check. local says the version is served
// from its copy, which serves on whatever the origin answers. s.originCheck is held.
func (s *Server) noteOriginCheckLocked(object *origin.Object, err error, local bool) error {
	if err != nil {
		err = fmt.Errorf("the ISO's origin does not answer with the version opened: %w", err)
	}
	failing := s.originChecked == object && s.originCheckErr != nil
	switch {
	case err != nil && !failing && local:
		s.log.Printf("%v; serving the local copy of the version opened, and ready (sno_iso_origin_check_ok is 0 until it does)", err)
	case err != nil && !failing:
		s.log.Printf("not ready: %v", err)
	case err == nil && failing:
		s.log.Printf("the ISO's origin answers again with the version opened")
	}
	s.originChecked, s.originCheckedAt, s.originCheckErr = object, time.Now(), err
	s.metrics.setOriginCheckOK(err == nil)
	return err
}
