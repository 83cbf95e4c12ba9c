package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/internal/safetext"
)

// Limits of a report. The hooks keep the journal's last MaxLog bytes; JSON escaping at most
// doubles them, so MaxBody leaves room for that and the other fields.
const (
	MaxLog     = 64 << 10
	MaxBody    = 3*MaxLog + 4<<10
	maxUnitLen = 256
)

// Report is what a node sends: only Phase is required. A Failed report names the unit that
// failed, its exit status and the last lines of its journal.
type Report struct {
	Phase  Phase  `json:"phase"`
	Unit   string `json:"unit,omitempty"`
	Status *int   `json:"status,omitempty"`
	Log    string `json:"log,omitempty"`
}

// Record is a report as a server received it.
type Record struct {
	Report
	Time time.Time `json:"time"`
	// From is the address the report came from.
	From string `json:"from,omitempty"`
}

// ErrBodyTooLarge is a report body over MaxBody bytes.
var ErrBodyTooLarge = fmt.Errorf("report body over %d bytes", MaxBody)

// DecodeReport reads one report body of at most MaxBody bytes and checks it: a known phase,
// a short unit name. A log over MaxLog bytes keeps its end, where a failure shows.
func DecodeReport(body io.Reader) (Report, error) {
	data, err := io.ReadAll(io.LimitReader(body, MaxBody+1))
	if err != nil {
		return Report{}, err
	}
	if len(data) > MaxBody {
		return Report{}, ErrBodyTooLarge
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("report body is not a JSON object {\"phase\": ...}: %w", err)
	}
	if dec.More() {
		return Report{}, errors.New("report body holds more than one JSON value")
	}
	if r.Phase == "" {
		return Report{}, errors.New(`report without "phase"`)
	}
	if _, err := ParsePhase(string(r.Phase)); err != nil {
		return Report{}, err
	}
	if len(r.Unit) > maxUnitLen || !utf8.ValidString(r.Unit) || strings.IndexFunc(r.Unit, unicode.IsControl) >= 0 {
		return Report{}, fmt.Errorf("unit name over %d bytes, not UTF-8 or with control characters", maxUnitLen)
	}
	r.Log = tail(printable(r.Log), MaxLog)
	return r, nil
}

// printable is s without control characters but newlines and tabs: a log is shown on
// terminals, where an escape sequence from the node must not act.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// tail is the last n bytes of s at most, starting on a whole UTF-8 character.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// same tells whether two records say the same thing: a repeated report is recorded once.
// Each phase but Failed is recorded once; failures differ by unit, status or log.
func same(a, b Report) bool {
	if a.Phase != b.Phase {
		return false
	}
	if a.Phase != Failed {
		return true
	}
	return a.Unit == b.Unit && a.Log == b.Log && (a.Status == nil) == (b.Status == nil) &&
		(a.Status == nil || *a.Status == *b.Status)
}

// Latest is the furthest phase the records reach and the failure after it, if any: a node
// that failed and then went on (a unit restarted and succeeded) is no longer failed.
func Latest(records []Record) (reached Phase, failure *Record) {
	for i := range records {
		r := &records[i]
		switch {
		case r.Phase == Failed:
			failure = r
		case reached == "" || r.Phase.rank() > reached.rank():
			reached, failure = r.Phase, nil
		}
	}
	return reached, failure
}

// String is the record on one line, without its log.
func (r Record) String() string {
	// A record may come from an impostor server: its words reach the terminal escaped.
	s := r.Time.UTC().Format(time.RFC3339) + " " + safetext.Escape(string(r.Phase))
	if r.Unit != "" {
		s += " unit=" + safetext.Escape(r.Unit)
	}
	if r.Status != nil {
		s += fmt.Sprintf(" status=%d", *r.Status)
	}
	return s
}
