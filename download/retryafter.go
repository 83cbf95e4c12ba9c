package download

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date, relative to now.
// It returns false when the header is absent or malformed; a date in the past is a zero wait.
func parseRetryAfter(s string, now time.Time) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if strings.TrimLeft(s, "0123456789") == "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil || secs > int64(1<<62/time.Second) {
			// More digits than a duration holds: a wait longer than any cap.
			return time.Duration(1<<63 - 1), true
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(s)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
