package download

import (
	"testing"
	"time"
)

func TestParseContentRange(t *testing.T) {
	for in, want := range map[string]contentRange{
		"bytes 100-199/200": {100, 199, 200},
		"bytes 0-0/*":       {0, 0, -1},
		"bytes */4096":      {-1, -1, 4096},
	} {
		got, err := parseContentRange(in)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "bytes", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-2/3", "bytes +1-2/3", "bytes */*", "bytes 0-99999999999999999999/*"} {
		if got, err := parseContentRange(bad); err == nil {
			t.Errorf("%q: got %+v, want an error", bad, got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"120":                           2 * time.Minute,
		"0":                             0,
		"Fri, 02 Jan 2026 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
		"99999999999999999999999":       time.Duration(1<<63 - 1),
	} {
		if got, ok := parseRetryAfter(in, now); !ok || got != want {
			t.Errorf("%q: got %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "-5", "soon", "1.5"} {
		if got, ok := parseRetryAfter(bad, now); ok {
			t.Errorf("%q: got %v, want not understood", bad, got)
		}
	}
}
