package serve

import (
	"testing"
	"time"
)

func TestParseVolumeDate(t *testing.T) {
	tests := map[string]time.Time{
		"2026110108000000\x00":                    time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC),
		"2026110108000050\x08":                    time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC),  // UTC+2, hundredths dropped
		"1999123123595900" + string([]byte{0xfc}): time.Date(2000, 1, 1, 0, 59, 59, 0, time.UTC), // UTC-1
	}
	for in, want := range tests {
		if got, ok := parseVolumeDate([]byte(in)); !ok || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"0000000000000000\x00", "2026130108000000\x00", "2026 10108000000\x00", "+026110108000000\x00", "202611010800000\x00", "2026110108000000\x7f"} {
		if got, ok := parseVolumeDate([]byte(bad)); ok {
			t.Errorf("%q parsed as %v", bad, got)
		}
	}
}
