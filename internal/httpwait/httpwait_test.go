package httpwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"120":                           2 * time.Minute,
		" 5 ":                           5 * time.Second,
		"0":                             0,
		"Fri, 02 Jan 2026 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
		"99999999999999999999999":       longest,
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

// FuzzRetryAfter feeds the header, which any server controls, to the parser.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := RetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("RetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}
