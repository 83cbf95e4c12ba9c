// Package presign reads when a pre-signed URL stops working, from the parameters its query
// carries: AWS SigV4 (X-Amz-Date + X-Amz-Expires, as S3 and compatible stores sign), Google
// Cloud Storage V4 (X-Goog-Date + X-Goog-Expires), and the legacy form (Expires=, the Unix
// time, as S3 SigV2, GCS V2 and CloudFront sign). The URL is untrusted input and its
// signature a credential: errors quote only the date and lifetime parameters.
package presign

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrMalformed says a URL carries expiry parameters that cannot be read.
var ErrMalformed = errors.New("malformed pre-signed URL expiry")

// MaxLifetime bounds the lifetime a URL may state: longer than any signer allows (SigV4 and
// GCS V4 allow 7 days), short enough that an expiry is always a representable time.
const MaxLifetime = 10 * 365 * 24 * time.Hour

// sigV4Date is the basic ISO 8601 form of X-Amz-Date and X-Goog-Date.
const sigV4Date = "20060102T150405Z"

// Expiry is when a pre-signed URL stops working.
type Expiry struct {
	At time.Time
	// Form names the signing form the parameters come from: "SigV4", "GCS V4", "Expires".
	Form string
}

// Expires reads the expiry of rawURL. ok is false when the URL carries no expiry parameters
// (not pre-signed, or signed in a form without a stated expiry); err is non-nil when it
// carries them malformed. Parameter names are matched without regard to case.
func Expires(rawURL string) (exp Expiry, ok bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Expiry{}, false, nil
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		// A query that does not parse as a whole still has the parameters that do.
		q = lenientQuery(u.RawQuery)
	}
	for _, form := range []struct{ name, date, lifetime string }{
		{"SigV4", "X-Amz-Date", "X-Amz-Expires"},
		{"GCS V4", "X-Goog-Date", "X-Goog-Expires"},
	} {
		lifetime, found := param(q, form.lifetime)
		if !found {
			continue
		}
		date, _ := param(q, form.date)
		signed, err := time.Parse(sigV4Date, date)
		if err != nil {
			return Expiry{}, true, fmt.Errorf("%w: %s=%q is not a date like 20260102T150405Z", ErrMalformed, form.date, quoteShort(date))
		}
		secs, err := seconds(lifetime)
		if err != nil || secs > int64(MaxLifetime/time.Second) {
			return Expiry{}, true, fmt.Errorf("%w: %s=%q is not a number of seconds up to %d", ErrMalformed, form.lifetime,
				quoteShort(lifetime), int64(MaxLifetime/time.Second))
		}
		return Expiry{At: signed.Add(time.Duration(secs) * time.Second), Form: form.name}, true, nil
	}
	if epoch, found := param(q, "Expires"); found {
		secs, err := seconds(epoch)
		// Up to the year 9999: a time that formats as a date.
		if err != nil || secs > 253402300799 {
			return Expiry{}, true, fmt.Errorf("%w: Expires=%q is not a Unix time in seconds", ErrMalformed, quoteShort(epoch))
		}
		return Expiry{At: time.Unix(secs, 0).UTC(), Form: "Expires"}, true, nil
	}
	return Expiry{}, false, nil
}

// param is the first value of the parameter called name: spelled so, else in the first
// spelling in another case (in sorted order, so that the answer is always the same).
func param(q url.Values, name string) (string, bool) {
	if v := q[name]; len(v) > 0 {
		return v[0], true
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if strings.EqualFold(k, name) && len(q[k]) > 0 {
			return q[k][0], true
		}
	}
	return "", false
}

// lenientQuery parses what parameters of raw it can, skipping the pairs that do not decode.
func lenientQuery(raw string) url.Values {
	q := url.Values{}
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 == nil && err2 == nil {
			q.Add(k, v)
		}
	}
	return q
}

// seconds reads a non-negative decimal count.
func seconds(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// quoteShort cuts a value quoted in an error to a length fit for a log line.
func quoteShort(s string) string {
	const most = 40
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}
