package httpsem

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseContentRange: what the parser accepts is a range within its size that formats
// back to a value parsing to the same range.
func FuzzParseContentRange(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := ParseContentRange(s)
		if err != nil {
			return
		}
		if cr.Satisfied() {
			if cr.Last < cr.First || (cr.Size >= 0 && cr.Last >= cr.Size) || cr.Len() <= 0 {
				t.Fatalf("%q accepted as %+v", s, cr)
			}
		} else if cr.First != -1 || cr.Last != -1 || cr.Size < 0 {
			t.Fatalf("%q: unsatisfied range %+v", s, cr)
		}
		again, err := ParseContentRange(cr.String())
		if err != nil || again != cr {
			t.Fatalf("%q: %+v formats as %q, which parses as %+v, %v", s, cr, cr.String(), again, err)
		}
	})
}

// FuzzParseETagList: an accepted list formats back to the same tags, each tag matches
// itself weakly, and strongly exactly when it is strong.
func FuzzParseETagList(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := ParseETagList(s)
		if err != nil {
			if ListMatches(s, `"x"`, false) && strings.Trim(s, " \t") != "*" {
				t.Fatalf("the malformed list %q matched", s)
			}
			return
		}
		formatted := make([]string, len(tags))
		for i, tag := range tags {
			formatted[i] = tag.String()
			if !WeakMatch(formatted[i], formatted[i]) || StrongMatch(formatted[i], formatted[i]) == tag.Weak {
				t.Fatalf("%q: tag %+v compares wrongly with itself", s, tag)
			}
			if !ListMatches(s, ETag{Opaque: tag.Opaque}.String(), false) {
				t.Fatalf("%q: does not match its own tag %q", s, tag.Opaque)
			}
		}
		again, err := ParseETagList(strings.Join(formatted, ", "))
		if err != nil || len(again) != len(tags) {
			t.Fatalf("%q: %q parses as %+v, %v", s, formatted, again, err)
		}
		for i := range tags {
			if again[i] != tags[i] {
				t.Fatalf("%q: tag %d %+v came back as %+v", s, i, tags[i], again[i])
			}
		}
	})
}

// FuzzRetryAfter: any header gives a wait of zero or more, and delay seconds give exactly
// that many seconds.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := RetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("RetryAfter(%q) = %v, %v", v, d, ok)
		}
		if secs, err := strconv.ParseUint(strings.TrimSpace(v), 10, 31); err == nil && strings.Trim(strings.TrimSpace(v), "0123456789") == "" {
			if !ok || d != time.Duration(secs)*time.Second {
				t.Fatalf("RetryAfter(%q) = %v, %v; want %d seconds", v, d, ok, secs)
			}
		}
	})
}
