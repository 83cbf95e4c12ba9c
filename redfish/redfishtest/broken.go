package redfishtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Answering runs a server on 127.0.0.1 that is no BMC: it gives every request the same
// answer (an HTML login page, JSON of another shape). It returns the server's URL.
func Answering(t testing.TB, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Unresponsive runs a server on 127.0.0.1 that accepts requests and never answers, until
// the client gives up or the test ends. It returns the server's URL.
func Unresponsive(t testing.TB) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv.URL
}
