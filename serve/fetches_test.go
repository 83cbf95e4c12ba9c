package serve

import (
	"net/http"
	"strings"
	"testing"
)

// The index page says who fetched each ISO: one GET or many Range reads, as BMCs do, and
// neither HEAD nor failures count.
func TestIndexShowsFetches(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "b": configA}, nil)
	_, page := h.get("/")
	if strings.Contains(string(page), "a.iso by") || !strings.Contains(string(page), "not yet") {
		t.Fatalf("index before any fetch:\n%s", page)
	}
	h.get("/a.iso", "Range: bytes=0-1023")
	h.get("/a.iso", "Range: bytes=1024-2047")
	h.do(http.MethodHead, "/b.iso")
	h.get("/nope.iso")
	_, page = h.get("/")
	if !strings.Contains(string(page), "a.iso by 127.0.0.1: 2048 bytes in 2 requests, last at ") {
		t.Errorf("index does not show the two range reads of a.iso:\n%s", page)
	}
	if strings.Contains(string(page), "b.iso by") || strings.Contains(string(page), "nope.iso by") {
		t.Errorf("index counts a HEAD or a failure as a fetch:\n%s", page)
	}
}
