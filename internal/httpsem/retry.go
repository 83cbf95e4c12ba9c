package httpsem

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// longest is the wait of a Retry-After with more seconds than a time.Duration holds: longer
// than any caller's cap.
const longest = time.Duration(1<<63 - 1)

// RetryAfter reads a Retry-After header value (RFC 9110 section 10.2.3): delay seconds or an
// HTTP date, relative to now. ok is false when the value is absent or malformed. A date in
// the past is a zero wait; callers cap the result to what they are willing to wait.
func RetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if strings.TrimLeft(v, "0123456789") == "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(longest/time.Second) {
			return longest, true
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

// Backoff is the wait after the failures-th failure in a row (from 1): base, doubled for
// each further failure, never more than limit (or base, when limit is below it).
func Backoff(base, limit time.Duration, failures int) time.Duration {
	if base <= 0 {
		return 0
	}
	wait := base
	for i := 1; i < failures && wait < limit; i++ {
		wait *= 2
	}
	return min(wait, max(limit, base))
}

// Sleep waits for d, or until ctx ends and then returns its error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
