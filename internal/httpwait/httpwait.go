// Package httpwait holds the waiting rules that sno-iso's HTTP clients (the stream
// downloader, the Redfish client) share: how long a server's Retry-After asks them to wait,
// and a wait that ends with the caller's context.
package httpwait

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
