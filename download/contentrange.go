package download

import (
	"fmt"
	"strconv"
	"strings"
)

// contentRange is a parsed Content-Range header (RFC 9110 section 14.4).
type contentRange struct {
	// Start and End are the first and last byte positions; -1 in an unsatisfied range
	// ("bytes */TOTAL").
	Start, End int64
	// Total is the complete length, -1 when the server sent "*".
	Total int64
}

// parseContentRange reads "bytes START-END/TOTAL", "bytes START-END/*" or "bytes */TOTAL".
func parseContentRange(s string) (contentRange, error) {
	bad := func(why string) (contentRange, error) {
		return contentRange{}, fmt.Errorf("malformed Content-Range %q: %s", s, why)
	}
	unit, rest, ok := strings.Cut(s, " ")
	if !ok || unit != "bytes" {
		return bad(`not a "bytes" range`)
	}
	span, total, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("no complete length")
	}
	cr := contentRange{Start: -1, End: -1, Total: -1}
	if total != "*" {
		n, err := parsePosition(total)
		if err != nil {
			return bad("complete length: " + err.Error())
		}
		cr.Total = n
	}
	if span == "*" {
		if cr.Total < 0 {
			return bad("neither a range nor a complete length")
		}
		return cr, nil
	}
	first, last, ok := strings.Cut(span, "-")
	if !ok {
		return bad("no range")
	}
	var err error
	if cr.Start, err = parsePosition(first); err != nil {
		return bad("first position: " + err.Error())
	}
	if cr.End, err = parsePosition(last); err != nil {
		return bad("last position: " + err.Error())
	}
	if cr.End < cr.Start || (cr.Total >= 0 && cr.End >= cr.Total) {
		return bad("range outside the complete length")
	}
	return cr, nil
}

// parsePosition reads a non-negative decimal byte position: digits only, no sign.
func parsePosition(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return strconv.ParseInt(s, 10, 64)
}
