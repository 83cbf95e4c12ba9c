package httpsem

import (
	"fmt"
	"strconv"
	"strings"
)

// ContentRange is a Content-Range header (RFC 9110 section 14.4) in bytes.
type ContentRange struct {
	// First and Last are the first and last byte positions, inclusive; both -1 in an
	// unsatisfied range ("bytes */SIZE", sent with a 416).
	First, Last int64
	// Size is the complete length; -1 when the server sent "*" (unknown).
	Size int64
}

// Unsatisfied is the Content-Range of a 416 for a representation of size bytes.
func Unsatisfied(size int64) ContentRange { return ContentRange{First: -1, Last: -1, Size: size} }

// Satisfied reports whether cr names bytes, rather than only the complete length.
func (cr ContentRange) Satisfied() bool { return cr.First >= 0 }

// Len is the number of bytes cr names: 0 for an unsatisfied range.
func (cr ContentRange) Len() int64 {
	if !cr.Satisfied() {
		return 0
	}
	return cr.Last - cr.First + 1
}

// String formats cr as the header value ParseContentRange reads back.
func (cr ContentRange) String() string {
	size := "*"
	if cr.Size >= 0 {
		size = strconv.FormatInt(cr.Size, 10)
	}
	if !cr.Satisfied() {
		return "bytes */" + size
	}
	return fmt.Sprintf("bytes %d-%d/%s", cr.First, cr.Last, size)
}

// ContentRangeError is a Content-Range header that is not a valid bytes range.
type ContentRangeError struct {
	Value  string // the header as received
	Reason string
}

func (e *ContentRangeError) Error() string {
	return fmt.Sprintf("malformed Content-Range %q: %s", e.Value, e.Reason)
}

// ParseContentRange reads "bytes FIRST-LAST/SIZE", "bytes FIRST-LAST/*" or "bytes */SIZE".
// Positions are plain decimal digits (no sign, no space); a range must end within the
// complete length when that is known.
func ParseContentRange(s string) (ContentRange, error) {
	bad := func(why string) (ContentRange, error) {
		return ContentRange{}, &ContentRangeError{Value: s, Reason: why}
	}
	unit, rest, ok := strings.Cut(s, " ")
	if !ok || unit != "bytes" {
		return bad(`not a "bytes" range`)
	}
	span, size, ok := strings.Cut(rest, "/")
	if !ok {
		return bad("no complete length")
	}
	cr := Unsatisfied(-1)
	if size != "*" {
		n, err := position(size)
		if err != nil {
			return bad("complete length: " + err.Error())
		}
		cr.Size = n
	}
	if span == "*" {
		if cr.Size < 0 {
			return bad("neither a range nor a complete length")
		}
		return cr, nil
	}
	first, last, ok := strings.Cut(span, "-")
	if !ok {
		return bad("no range")
	}
	var err error
	if cr.First, err = position(first); err != nil {
		return bad("first position: " + err.Error())
	}
	if cr.Last, err = position(last); err != nil {
		return bad("last position: " + err.Error())
	}
	if cr.Last < cr.First || (cr.Size >= 0 && cr.Last >= cr.Size) {
		return bad("range outside the complete length")
	}
	return cr, nil
}

// position reads a non-negative decimal byte position: digits only.
func position(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return strconv.ParseInt(s, 10, 64)
}
