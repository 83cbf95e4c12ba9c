package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An --iso URL whose server names no version of the file (no ETag, no Last-Modified) is
// refused at start: a file replaced there would be served as a mix of two versions.
func TestServeRefusesAnOriginWithoutValidator(t *testing.T) {
	data := bytes.Repeat([]byte("iso"), 100_000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	defer s.Close()
	r := sno(t, nil, "serve", "--iso", s.URL+"/rhcos.iso?sig=SECRET", "--nodes", t.TempDir(), "--listen", "127.0.0.1:0")
	if r.code != 1 || strings.Contains(string(r.stderr), "SECRET") {
		t.Errorf("exit %d, %s", r.code, r.stderr)
	}
	wantFailure(t, r, s.URL+"/rhcos.iso", "neither a strong ETag nor Last-Modified", "sno-iso download")
}
