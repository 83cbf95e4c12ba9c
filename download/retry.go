package download

import (
	"errors"
	"net/http"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// transportError is a request or body that failed on the way: worth another attempt.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// errRangeRejected is an answer to a resumed request that cannot be appended: the part was
// emptied and the next attempt, at once, asks for the whole file.
var errRangeRejected = errors.New("the server's partial response does not continue the download; starting over")

// retryable reports whether the status may go away by itself: a timeout, rate limiting or a
// server error. Other client errors (404, 403, ...) will not.
func (e *StatusError) retryable() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// retryWait says whether err is worth another attempt, and after how long.
func (f *Fetcher) retryWait(err error, failures int) (time.Duration, bool) {
	var transport *transportError
	var status *StatusError
	switch {
	case errors.Is(err, errRangeRejected):
		return 0, true
	case errors.As(err, &transport):
		// A connection lost or stalled: back off below.
	case errors.As(err, &status) && status.retryable():
		if status.RetryAfter > 0 {
			return min(status.RetryAfter, f.MaxRetryAfter), true
		}
	default:
		return 0, false
	}
	return httpsem.Backoff(f.Backoff, f.MaxBackoff, failures), true
}
