package httpsem

import (
	"errors"
	"net/http"
	"strings"
	"time"
)

// ETag is an entity tag (RFC 9110 section 8.8.3).
type ETag struct {
	// Opaque is the tag between its double quotes.
	Opaque string
	// Weak is set for a tag sent with the "W/" prefix.
	Weak bool
}

// String formats t as a header value: `"opaque"` or `W/"opaque"`.
func (t ETag) String() string {
	s := `"` + t.Opaque + `"`
	if t.Weak {
		return "W/" + s
	}
	return s
}

// ErrNotETag is the error of ParseETag and ParseETagList for a value that is not in the
// entity-tag form: unquoted, unterminated, or with a byte an entity tag may not hold.
var ErrNotETag = errors.New("not an entity tag (RFC 9110: an optional W/ and a double-quoted string)")

// ParseETag reads one entity tag; surrounding spaces and tabs are allowed.
func ParseETag(s string) (ETag, error) {
	t, rest, err := scanETag(strings.Trim(s, " \t"))
	if err != nil || rest != "" {
		return ETag{}, ErrNotETag
	}
	return t, nil
}

// ParseETagList reads a comma-separated list of entity tags, as If-Match and If-None-Match
// carry (not "*", which callers check first). Empty elements are allowed, as in any HTTP list;
// a list with no tag or with a malformed element is an error.
func ParseETagList(s string) ([]ETag, error) {
	var tags []ETag
	for rest := s; ; {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			break
		}
		t, after, err := scanETag(rest)
		if err != nil {
			return nil, err
		}
		after = strings.TrimLeft(after, " \t")
		if after != "" && after[0] != ',' {
			return nil, ErrNotETag
		}
		tags, rest = append(tags, t), after
	}
	if len(tags) == 0 {
		return nil, ErrNotETag
	}
	return tags, nil
}

// scanETag reads the entity tag at the start of s and returns what follows it.
func scanETag(s string) (ETag, string, error) {
	var t ETag
	if rest, weak := strings.CutPrefix(s, "W/"); weak {
		t.Weak, s = true, rest
	}
	if !strings.HasPrefix(s, `"`) {
		return ETag{}, "", ErrNotETag
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			t.Opaque = s[1:i]
			return t, s[i+1:], nil
		case c < 0x21 || c == 0x7f:
			// etagc is %x21 / %x23-7E / obs-text: no space, no control byte.
			return ETag{}, "", ErrNotETag
		}
	}
	return ETag{}, "", ErrNotETag
}

// StrongMatch is RFC 9110's strong comparison: a and b are both valid, both strong, with the
// same opaque tag. It decides If-Match, If-Range and whether a response is still the version
// a client opened.
func StrongMatch(a, b string) bool {
	ta, errA := ParseETag(a)
	tb, errB := ParseETag(b)
	return errA == nil && errB == nil && !ta.Weak && !tb.Weak && ta.Opaque == tb.Opaque
}

// WeakMatch is RFC 9110's weak comparison: a and b are both valid with the same opaque tag,
// whatever their strength. It decides If-None-Match.
func WeakMatch(a, b string) bool {
	ta, errA := ParseETag(a)
	tb, errB := ParseETag(b)
	return errA == nil && errB == nil && ta.Opaque == tb.Opaque
}

// IsStrong reports whether etag is a valid strong entity tag: one a client may send back as
// If-Range and compare strongly.
func IsStrong(etag string) bool {
	t, err := ParseETag(etag)
	return err == nil && !t.Weak
}

// ListMatches evaluates an If-Match (strong) or If-None-Match (weak) header against the
// current entity tag: "*" matches any, a list matches when one of its tags compares equal. A
// malformed list matches nothing.
func ListMatches(list, current string, strong bool) bool {
	if strings.Trim(list, " \t") == "*" {
		return true
	}
	cur, err := ParseETag(current)
	tags, errList := ParseETagList(list)
	if err != nil || errList != nil {
		return false
	}
	for _, t := range tags {
		if t.Opaque == cur.Opaque && (!strong || (!t.Weak && !cur.Weak)) {
			return true
		}
	}
	return false
}

// IfRangeHolds reports whether an If-Range value still names the representation with entity
// tag etag and date lastModified (RFC 9110 section 13.1.5): a tag must match etag strongly;
// a date must equal lastModified exactly, and only counts when datesValidate (the date
// changes whenever the bytes do). An empty If-Range holds; anything else that is neither a
// tag nor a date does not.
func IfRangeHolds(ifRange, etag string, lastModified time.Time, datesValidate bool) bool {
	ifRange = strings.Trim(ifRange, " \t")
	if ifRange == "" {
		return true
	}
	if strings.HasPrefix(ifRange, `"`) || strings.HasPrefix(ifRange, "W/") {
		return StrongMatch(ifRange, etag)
	}
	t, err := http.ParseTime(ifRange)
	return err == nil && datesValidate && t.Equal(lastModified)
}

// RangeValidator is what a client sends as If-Range to resume the response with header h:
// its strong entity tag, else its Last-Modified date; "" when it has neither (a weak or
// malformed tag may not be sent there).
func RangeValidator(h http.Header) string {
	if etag := h.Get("ETag"); IsStrong(etag) {
		return strings.Trim(etag, " \t")
	}
	if date := h.Get("Last-Modified"); date != "" {
		if _, err := http.ParseTime(date); err == nil {
			return date
		}
	}
	return ""
}
