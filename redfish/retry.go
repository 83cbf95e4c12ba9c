package redfish

import (
	"net/http"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// Backoff paces retries and polls: the first wait is Base, doubled each time up to Max, for
// at most Attempts tries of one request. Tests set a Base of a millisecond.
type Backoff struct {
	Base, Max time.Duration
	Attempts  int
	// Poll is the wait between reads of changing state (power, inserted media, tasks
	// without Retry-After).
	Poll time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 2 * time.Second
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	if b.Attempts <= 0 {
		b.Attempts = 8
	}
	if b.Poll <= 0 {
		b.Poll = time.Second
	}
	return b
}

// delay is the wait after the attempt-th try (from 1).
func (b Backoff) delay(attempt int) time.Duration { return httpsem.Backoff(b.Base, b.Max, attempt) }

// transientMessages are refusals that mean "not now": Dell's SYS518 (the iDRAC is busy),
// iLO's refusals while the System is in POST or changing state.
var transientMessages = []string{"SYS518", "UnableToModifyDuringSystemPOST", "InvalidOperationForSystemState"}

// isTransient reports whether a refused POST or PATCH may succeed if sent again: 409 right
// after a power change (iDRAC10), 503, and the vendors' "busy" messages.
func isTransient(resp *response) bool {
	switch resp.status {
	case http.StatusConflict, http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return true
	}
	if resp.status < 400 {
		return false
	}
	return parseError("", "", resp.status, resp.body).mentions(transientMessages...)
}

// maxRetryAfter bounds what a BMC may ask a client to wait.
const maxRetryAfter = 5 * time.Minute

// parseRetryAfter reads a Retry-After header, clamped to maxRetryAfter; ok is false when the
// header is absent or malformed.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	wait, ok := httpsem.RetryAfter(v, now)
	return min(wait, maxRetryAfter), ok
}
