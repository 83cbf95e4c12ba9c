package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// maxRanges bounds the ranges of one request; more, or ranges that overlap into more bytes
// than the file has, get the whole file, which costs the server no more than that.
const maxRanges = 64

// byteRange is n bytes from off.
type byteRange struct{ off, n int64 }

func (r byteRange) contentRange(size int64) string {
	return httpsem.ContentRange{First: r.off, Last: r.off + r.n - 1, Size: size}.String()
}

// serveArtifact answers a GET or HEAD for a: preconditions (RFC 9110 section 13.2.2), then
// the whole file, one range or several as multipart/byteranges. Every response that sends
// bytes has an exact Content-Length, so file spans go out with sendfile.
// Each chunk of the body must be accepted within writeTimeout.
func serveArtifact(w http.ResponseWriter, r *http.Request, a *artifact, writeTimeout time.Duration) error {
	h := w.Header()
	h.Set("ETag", a.etag)
	h.Set("Last-Modified", a.modTime.Format(http.TimeFormat))
	// Revalidate every time: a node's files can change whenever its owner edits them.
	h.Set("Cache-Control", "no-cache")
	h.Set("Accept-Ranges", "bytes")
	if status := preconditions(r, a); status != 0 {
		if status == http.StatusPreconditionFailed {
			http.Error(w, "precondition failed: the file has changed", status)
		} else {
			w.WriteHeader(status)
		}
		return nil
	}
	h.Set("Content-Type", a.contentType)

	ranges, err := requestedRanges(r, a)
	if err != nil {
		h.Set("Content-Range", httpsem.Unsatisfied(a.size).String())
		http.Error(w, err.Error(), http.StatusRequestedRangeNotSatisfiable)
		return nil
	}
	bw := newBodyWriter(w, a.file, writeTimeout)
	defer bw.close()
	if r.Method != http.MethodHead {
		first := byteRange{0, a.size}
		if len(ranges) > 0 {
			first = ranges[0]
		}
		if err := bw.openFirstSpan(r.Context(), a, first.off, first.n); err != nil {
			// The error is not this content: no validators for it.
			h.Del("ETag")
			h.Del("Last-Modified")
			return err
		}
	}
	switch len(ranges) {
	case 0:
		h.Set("Content-Length", strconv.FormatInt(a.size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return nil
		}
		return bw.writeRange(a, 0, a.size)
	case 1:
		h.Set("Content-Range", ranges[0].contentRange(a.size))
		h.Set("Content-Length", strconv.FormatInt(ranges[0].n, 10))
		w.WriteHeader(http.StatusPartialContent)
		if r.Method == http.MethodHead {
			return nil
		}
		return bw.writeRange(a, ranges[0].off, ranges[0].n)
	}
	mp := newByteranges(a, ranges)
	h.Set("Content-Type", "multipart/byteranges; boundary="+mp.boundary)
	h.Set("Content-Length", strconv.FormatInt(mp.length(), 10))
	w.WriteHeader(http.StatusPartialContent)
	if r.Method == http.MethodHead {
		return nil
	}
	for i, rg := range ranges {
		if err := bw.write([]byte(mp.partHeader(i))); err != nil {
			return err
		}
		if err := bw.writeRange(a, rg.off, rg.n); err != nil {
			return err
		}
	}
	return bw.write([]byte(mp.trailer()))
}

// preconditions evaluates If-Match, If-Unmodified-Since, If-None-Match and
// If-Modified-Since in the order RFC 9110 gives, and returns 304, 412 or 0 to go on. Dates
// are ignored for content that can change without its date changing, as for content without
// a date (RFC 9110 sections 13.1.3 and 13.1.4).
func preconditions(r *http.Request, a *artifact) int {
	if im := r.Header.Get("If-Match"); im != "" {
		if !httpsem.ListMatches(im, a.etag, true) {
			return http.StatusPreconditionFailed
		}
	} else if t, ok := httpDate(r.Header.Get("If-Unmodified-Since")); ok && a.datesValidate && a.modTime.After(t) {
		return http.StatusPreconditionFailed
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if httpsem.ListMatches(inm, a.etag, false) {
			return http.StatusNotModified
		}
	} else if t, ok := httpDate(r.Header.Get("If-Modified-Since")); ok && a.datesValidate && !a.modTime.After(t) {
		return http.StatusNotModified
	}
	return 0
}

// requestedRanges returns the satisfiable ranges of the Range header, or none when the
// whole file is to be sent: no Range, another unit, an If-Range that no longer matches, or
// too many ranges. A malformed or unsatisfiable bytes range is an error (416).
func requestedRanges(r *http.Request, a *artifact) ([]byteRange, error) {
	header := r.Header.Get("Range")
	unit, set, ok := strings.Cut(header, "=")
	if header == "" || !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil, nil
	}
	if !httpsem.IfRangeHolds(r.Header.Get("If-Range"), a.etag, a.modTime, a.datesValidate) {
		return nil, nil
	}
	ranges, err := parseRanges(set, a.size)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, rg := range ranges {
		total += rg.n
	}
	if len(ranges) > maxRanges || total > a.size {
		return nil, nil
	}
	return ranges, nil
}

// parseRanges parses a bytes range set ("0-99, 200-, -50") against size: unsatisfiable
// ranges are dropped, and none left is an error.
func parseRanges(set string, size int64) ([]byteRange, error) {
	var ranges []byteRange
	specs := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		specs++
		first, last, ok := strings.Cut(spec, "-")
		if !ok {
			return nil, fmt.Errorf("invalid range %q", spec)
		}
		if first == "" {
			// A suffix: the last n bytes.
			n, err := rangeNumber(last)
			if err != nil {
				return nil, fmt.Errorf("invalid range %q", spec)
			}
			if n > 0 && size > 0 {
				n = min(n, size)
				ranges = append(ranges, byteRange{size - n, n})
			}
			continue
		}
		start, err := rangeNumber(first)
		if err != nil {
			return nil, fmt.Errorf("invalid range %q", spec)
		}
		end := size - 1
		if last != "" {
			if end, err = rangeNumber(last); err != nil || end < start {
				return nil, fmt.Errorf("invalid range %q", spec)
			}
			end = min(end, size-1)
		}
		if start < size {
			ranges = append(ranges, byteRange{start, end - start + 1})
		}
	}
	if specs == 0 {
		return nil, errors.New("empty range set")
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("no range of %q is within the %d bytes of the file", set, size)
	}
	return ranges, nil
}

// rangeNumber parses a non-negative decimal; signs and spaces are not allowed.
func rangeNumber(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a number")
	}
	return strconv.ParseInt(s, 10, 64)
}

func httpDate(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := http.ParseTime(s)
	return t, err == nil
}

// byteranges frames the ranges of a multipart/byteranges body as mime/multipart writes it,
// so its length is known before the first byte.
type byteranges struct {
	boundary    string
	contentType string
	size        int64
	ranges      []byteRange
}

func newByteranges(a *artifact, ranges []byteRange) *byteranges {
	var b [15]byte
	rand.Read(b[:])
	return &byteranges{boundary: hex.EncodeToString(b[:]), contentType: a.contentType, size: a.size, ranges: ranges}
}

func (m *byteranges) partHeader(i int) string {
	sep := "\r\n"
	if i == 0 {
		sep = ""
	}
	return fmt.Sprintf("%s--%s\r\nContent-Range: %s\r\nContent-Type: %s\r\n\r\n",
		sep, m.boundary, m.ranges[i].contentRange(m.size), m.contentType)
}

func (m *byteranges) trailer() string { return "\r\n--" + m.boundary + "--\r\n" }

func (m *byteranges) length() int64 {
	n := int64(len(m.trailer()))
	for i, r := range m.ranges {
		n += int64(len(m.partHeader(i))) + r.n
	}
	return n
}
