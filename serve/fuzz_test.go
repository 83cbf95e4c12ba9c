package serve

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzRequest sends the server arbitrary paths and Range and precondition headers, the
// untrusted input it parses, and checks that every answer is consistent: a known status,
// a body as long as Content-Length says, and bytes that are the file's bytes where the
// Content-Range says.
func FuzzRequest(f *testing.F) {
	// The committed secret makes the corpus's tokens right: a's is 3mSa3tC7bIgncTs34ttb8g.
	h := newHarness(f, "", map[string]string{"a": configA}, func(c *testSetup) {
		c.BaseURL = "http://192.0.2.1"
		c.SecretFile = testSecretFile
	})
	full := h.want(configA)
	aISO := h.path("/a.iso")
	first, _ := h.get("/a.iso")
	etag, lastModified := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	f.Add(aISO, "bytes=0-1023", "", "", "")
	f.Add(aISO, "bytes=139250-139300,-5,0-0", etag, "", "")
	f.Add(aISO, "bytes=-0", "", etag, "")
	f.Add(aISO, "bytes=5-1,x", lastModified, "", lastModified)
	f.Add(h.path("/a/../a.iso"), "bytes=1-", "", "W/"+etag, "")
	f.Add(h.path("/a/boot.ipxe"), "bytes=0-3", "", "*", "")
	f.Add("/a.iso", "bytes=0-1023", "", "", "")
	f.Add("/rootfs.img", "bytes=0-0,0-0,0-0", "", "", "Sun, 06 Nov 1994 08:49:37 GMT")
	f.Fuzz(func(t *testing.T, path, rangeHeader, ifRange, ifNoneMatch, ifModifiedSince string) {
		req := &http.Request{
			Method: http.MethodGet, URL: &url.URL{Path: path}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "192.0.2.1", RemoteAddr: "192.0.2.2:1234",
		}
		for k, v := range map[string]string{"Range": rangeHeader, "If-Range": ifRange, "If-None-Match": ifNoneMatch, "If-Modified-Since": ifModifiedSince} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req.WithContext(t.Context()))
		resp := rec.Result()
		body, _ := io.ReadAll(resp.Body)
		switch resp.StatusCode {
		case 200, 206, 304, 400, 404, 416, 500, 501:
		default:
			t.Fatalf("%s: unexpected status %d", path, resp.StatusCode)
		}
		if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
			t.Fatalf("%s: Content-Length %s for %d bytes", path, cl, len(body))
		}
		if path != aISO {
			if bytes.Equal(body, full) {
				t.Fatalf("%s: a's ISO served at another path than its capability URL", path)
			}
			return
		}
		switch resp.StatusCode {
		case 200:
			if !bytes.Equal(body, full) {
				t.Fatal("200 without the whole file")
			}
		case 206:
			checkPartial(t, resp.Header, body, full)
		}
	})
}

// checkPartial checks a 206 body against the file: one range, or multipart/byteranges.
func checkPartial(t *testing.T, header http.Header, body, full []byte) {
	mediaType, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	if mediaType != "multipart/byteranges" {
		checkContentRange(t, header.Get("Content-Range"), body, full)
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	parts := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		checkContentRange(t, p.Header.Get("Content-Range"), data, full)
		parts++
	}
	if parts < 2 || parts > maxRanges {
		t.Fatalf("multipart response with %d parts", parts)
	}
}

func checkContentRange(t *testing.T, contentRange string, data, full []byte) {
	spec, ok := strings.CutPrefix(contentRange, "bytes ")
	first, rest, ok2 := strings.Cut(spec, "-")
	last, size, ok3 := strings.Cut(rest, "/")
	from, err1 := strconv.Atoi(first)
	to, err2 := strconv.Atoi(last)
	if !ok || !ok2 || !ok3 || err1 != nil || err2 != nil || size != strconv.Itoa(len(full)) || from > to || to >= len(full) {
		t.Fatalf("Content-Range %q", contentRange)
	}
	if !bytes.Equal(data, full[from:to+1]) {
		t.Fatalf("the bytes of %q differ from the file's", contentRange)
	}
}

// FuzzVolumeDate: the dates of an ISO's primary volume descriptor are untrusted bytes; what
// parses is a real time that survives the offset.
func FuzzVolumeDate(f *testing.F) {
	f.Add([]byte("2026110108000000\x00"))
	f.Add([]byte("0000000000000000\x00"))
	f.Add([]byte("2026023130000000\xd0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseVolumeDate(b)
		if !ok {
			return
		}
		if len(b) != 17 || got.Location() != time.UTC || got.Year() < 0 || got.Year() > 10000 {
			t.Fatalf("%q parsed as %v", b, got)
		}
	})
}
