package httpsem

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestParseContentRange(t *testing.T) {
	for in, want := range map[string]ContentRange{
		"bytes 100-199/200":   {100, 199, 200},
		"bytes 0-0/1":         {0, 0, 1},
		"bytes 5-1023/100000": {5, 1023, 100000},
		"bytes 0-0/*":         {0, 0, -1},
		"bytes */4096":        {-1, -1, 4096},
	} {
		got, err := ParseContentRange(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%q: got %+v (%q), %v; want %+v", in, got, got.String(), err, want)
		}
	}
	for _, bad := range []string{"", "bytes", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10", "bytes 0-100/100",
		"bytes -1-2/3", "bytes +1-2/3", "bytes 0-5/+10", "bytes */*", "bytes 0-5", "bytes 0 -5/10", "bytes 0-5/10 ",
		"Bytes 0-5/10", "bytes 0-99999999999999999999/*", "bytes 0-99999999999999999999/1"} {
		got, err := ParseContentRange(bad)
		var cre *ContentRangeError
		if !errors.As(err, &cre) || cre.Value != bad {
			t.Errorf("%q: got %+v, %v; want a ContentRangeError naming it", bad, got, err)
		}
	}
	if got := (ContentRange{First: 10, Last: 19, Size: 100}).Len(); got != 10 {
		t.Errorf("Len of 10-19: %d", got)
	}
	if got := Unsatisfied(7); got.Satisfied() || got.Len() != 0 || got.String() != "bytes */7" {
		t.Errorf("Unsatisfied(7) = %+v, %q", got, got.String())
	}
}

func TestParseETag(t *testing.T) {
	for in, want := range map[string]ETag{
		`"abc"`:     {Opaque: "abc"},
		`W/"abc"`:   {Opaque: "abc", Weak: true},
		` "a,b" `:   {Opaque: "a,b"},
		`""`:        {},
		`W/""`:      {Weak: true},
		"\"\xe9t\"": {Opaque: "\xe9t"}, // obs-text is allowed
	} {
		got, err := ParseETag(in)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", `W/abc`, `w/"abc"`, `"abc`, `"a"b"`, `"a b"`, "\"a\x01\"", `W/`, `"a" "b"`, `W/W/"a"`} {
		if got, err := ParseETag(bad); !errors.Is(err, ErrNotETag) {
			t.Errorf("%q: got %+v, %v; want ErrNotETag", bad, got, err)
		}
	}
}

// TestETagComparison is RFC 9110 section 8.8.3.2's table, and what an unquoted (invalid)
// tag does: it matches nothing, not even itself.
func TestETagComparison(t *testing.T) {
	for _, c := range []struct {
		a, b         string
		strong, weak bool
	}{
		{`W/"1"`, `W/"1"`, false, true},
		{`W/"1"`, `W/"2"`, false, false},
		{`W/"1"`, `"1"`, false, true},
		{`"1"`, `"1"`, true, true},
		{`"1"`, `"2"`, false, false},
		{`abc`, `abc`, false, false},
		{`abc`, `"abc"`, false, false},
		{`W/abc`, `"abc"`, false, false},
		{``, ``, false, false},
	} {
		if got := StrongMatch(c.a, c.b); got != c.strong {
			t.Errorf("StrongMatch(%q, %q) = %v", c.a, c.b, got)
		}
		if got := WeakMatch(c.a, c.b); got != c.weak {
			t.Errorf("WeakMatch(%q, %q) = %v", c.a, c.b, got)
		}
		if StrongMatch(c.a, c.b) != StrongMatch(c.b, c.a) || WeakMatch(c.a, c.b) != WeakMatch(c.b, c.a) {
			t.Errorf("%q and %q: comparison is not symmetric", c.a, c.b)
		}
	}
	for etag, strong := range map[string]bool{`"x"`: true, `W/"x"`: false, `x`: false, ``: false, `"x`: false} {
		if IsStrong(etag) != strong {
			t.Errorf("IsStrong(%q) = %v", etag, !strong)
		}
	}
}

func TestListMatches(t *testing.T) {
	for _, c := range []struct {
		list, current string
		strong, want  bool
	}{
		{`*`, `"v1"`, true, true},
		{` * `, `"v1"`, false, true},
		{`"v0", "v1"`, `"v1"`, true, true},
		{`"v0","v1"`, `"v1"`, false, true},
		{`W/"v1"`, `"v1"`, true, false}, // If-Match compares strongly
		{`W/"v1"`, `"v1"`, false, true}, // If-None-Match weakly
		{`"a,b"`, `"a,b"`, true, true},  // a comma inside a tag is not a separator
		{`"a"`, `"a,b"`, true, false},
		{`v1`, `"v1"`, false, false}, // unquoted: not a tag
		{`"v1", v2`, `"v1"`, true, false},
		{`"v1" "v2"`, `"v1"`, true, false},
		{`, ,"v1",`, `"v1"`, true, true},
		{``, `"v1"`, true, false},
		{`"v1"`, `v1`, false, false},
	} {
		if got := ListMatches(c.list, c.current, c.strong); got != c.want {
			t.Errorf("ListMatches(%q, %q, strong %v) = %v", c.list, c.current, c.strong, got)
		}
	}
}

func TestIfRangeHolds(t *testing.T) {
	mod := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	date := mod.Format(http.TimeFormat)
	for _, c := range []struct {
		ifRange       string
		datesValidate bool
		want          bool
	}{
		{``, false, true},
		{`"v1"`, false, true},
		{`W/"v1"`, false, false}, // a weak tag never holds
		{`"v2"`, true, false},
		{`v1`, true, false}, // unquoted: neither a tag nor a date
		{date, true, true},
		{date, false, false}, // a date only counts where dates change with the bytes
		{mod.Add(time.Second).Format(http.TimeFormat), true, false},
		{mod.Add(-time.Second).Format(http.TimeFormat), true, false},
		{"yesterday", true, false},
	} {
		if got := IfRangeHolds(c.ifRange, `"v1"`, mod, c.datesValidate); got != c.want {
			t.Errorf("IfRangeHolds(%q, dates %v) = %v", c.ifRange, c.datesValidate, got)
		}
	}
	if IfRangeHolds(`W/"v1"`, `W/"v1"`, mod, true) {
		t.Error("If-Range with a weak tag held against the same weak tag")
	}
}

func TestRangeValidator(t *testing.T) {
	date := "Wed, 04 Mar 2026 05:06:07 GMT"
	for _, c := range []struct {
		etag, lastModified, want string
	}{
		{`"v1"`, date, `"v1"`},
		{`W/"v1"`, date, date},
		{`v1`, date, date}, // unquoted: not a tag, so not strong
		{`W/"v1"`, "", ""},
		{``, "last week", ""},
		{``, "", ""},
	} {
		h := http.Header{}
		if c.etag != "" {
			h.Set("ETag", c.etag)
		}
		if c.lastModified != "" {
			h.Set("Last-Modified", c.lastModified)
		}
		if got := RangeValidator(h); got != c.want {
			t.Errorf("ETag %q, Last-Modified %q: %q, want %q", c.etag, c.lastModified, got, c.want)
		}
		// What a client sends back, the server holds to.
		if got := RangeValidator(h); got != "" {
			mod, _ := http.ParseTime(c.lastModified)
			if !IfRangeHolds(got, c.etag, mod, true) {
				t.Errorf("If-Range %q does not hold against the response it came from", got)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"120":                            2 * time.Minute,
		" 5 ":                            5 * time.Second,
		"0":                              0,
		"Fri, 02 Jan 2026 03:04:35 GMT":  30 * time.Second,
		"Friday, 02-Jan-26 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT":  0,
		"99999999999999999999999":        longest,
	} {
		if got, ok := RetryAfter(in, now); !ok || got != want {
			t.Errorf("%q: got %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "-5", "+5", "soon", "1.5"} {
		if got, ok := RetryAfter(bad, now); ok {
			t.Errorf("%q: got %v, want not understood", bad, got)
		}
	}
}

func TestBackoff(t *testing.T) {
	var got []time.Duration
	for failures := 1; failures <= 6; failures++ {
		got = append(got, Backoff(time.Second, 10*time.Second, failures))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Backoff(1s, 10s, 1..6) = %v, want %v", got, want)
		}
	}
	if got := Backoff(time.Second, 0, 3); got != time.Second {
		t.Errorf("a limit below the base: %v, want the base", got)
	}
	if got := Backoff(time.Hour, 1<<62, 1<<30); got != 1<<62 {
		t.Errorf("many failures: %v, want the limit", got)
	}
	if got := Backoff(0, time.Second, 5); got != 0 {
		t.Errorf("no base: %v", got)
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on an ended context: %v, want context.Canceled", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a zero Sleep on an ended context: %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep: %v", err)
	}
}
