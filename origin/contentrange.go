package origin

import (
	"fmt"
	"strconv"
	"strings"
)

// ContentRange is a Content-Range header of a 206: bytes First to Last (inclusive) of an
// object of Size bytes.
type ContentRange struct {
	First, Last, Size int64
}

// ParseContentRange parses "bytes FIRST-LAST/SIZE" (RFC 9110 section 14.4). An unknown
// size ("*"), a range past the size, and anything but plain decimal digits are errors.
func ParseContentRange(s string) (ContentRange, error) {
	unit, rest, ok := strings.Cut(s, " ")
	if !ok || unit != "bytes" {
		return ContentRange{}, fmt.Errorf("Content-Range %q is not a bytes range", s)
	}
	span, size, ok := strings.Cut(rest, "/")
	first, last, ok2 := strings.Cut(span, "-")
	if !ok || !ok2 {
		return ContentRange{}, fmt.Errorf("Content-Range %q is not FIRST-LAST/SIZE", s)
	}
	var cr ContentRange
	for _, f := range []struct {
		text string
		to   *int64
	}{{first, &cr.First}, {last, &cr.Last}, {size, &cr.Size}} {
		n, err := decimal(f.text)
		if err != nil {
			return ContentRange{}, fmt.Errorf("Content-Range %q: %q is not a byte count", s, f.text)
		}
		*f.to = n
	}
	if cr.First > cr.Last || cr.Last >= cr.Size {
		return ContentRange{}, fmt.Errorf("Content-Range %q: not a range within the size", s)
	}
	return cr, nil
}

func decimal(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

func (cr ContentRange) String() string {
	return fmt.Sprintf("bytes %d-%d/%d", cr.First, cr.Last, cr.Size)
}
