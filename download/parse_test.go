package download

import (
	"testing"
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
