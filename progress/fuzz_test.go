package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// A report body from the network: what DecodeReport accepts has a known phase, a log within
// MaxLog without control characters but newlines and tabs, and decodes again to itself.
func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"phase":"live-booted"}`))
	f.Add([]byte(`{"phase":"failed","unit":"install-to-disk.service","status":1,"log":"a\n\tb\u001b[2J"}`))
	f.Add([]byte(`{"phase":"failed","status":-1e99}`))
	f.Add([]byte(`{"phase":"x"}{"phase":"y"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeReport(bytes.NewReader(body))
		if err != nil {
			return
		}
		if _, err := ParsePhase(string(r.Phase)); err != nil {
			t.Fatalf("accepted phase %q", r.Phase)
		}
		if len(r.Log) > MaxLog || strings.IndexFunc(r.Log, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\t' }) >= 0 {
			t.Fatalf("log of %d bytes with control characters kept: %q", len(r.Log), r.Log)
		}
		again, _ := json.Marshal(r)
		r2, err := DecodeReport(bytes.NewReader(again))
		if err != nil || !same(r, r2) || r.Log != r2.Log || r.Unit != r2.Unit {
			t.Fatalf("%+v decodes again as %+v, %v", r, r2, err)
		}
	})
}

// A progress file, possibly cut or edited: every record read has a known phase.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"phase":"live-booted","time":"2026-12-03T11:00:00Z"}` + "\n" + `{"phase":"boot`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _ := readRecords(bytes.NewReader(data))
		for _, r := range recs {
			if _, err := ParsePhase(string(r.Phase)); err != nil {
				t.Fatalf("record with phase %q", r.Phase)
			}
		}
	})
}
