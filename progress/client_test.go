package progress

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A report URL's token lets anyone forge the node's reports: a transport error names the
// URL with {token} in its place, and without a password or query.
func TestFetchErrorHidesTheToken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the connection is refused
	for _, base := range []string{"http://" + addr, "http://u:pw@" + addr + "/prefix"} {
		url := URL(base, testKey, "sno") + "?sig=QUERYSECRET"
		token := Token(testKey, "sno")
		_, err := Fetch(context.Background(), http.DefaultClient, url)
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		for _, secret := range []string{token, "pw", "QUERYSECRET"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows %q: %v", secret, err)
			}
		}
		if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "/{token}/sno/report") {
			t.Errorf("the error does not name the server and node: %v", err)
		}
		if err := Send(context.Background(), http.DefaultClient, url, Report{Phase: LiveBooted}); err == nil ||
			strings.Contains(err.Error(), token) {
			t.Errorf("Send: %v", err)
		}
	}
}

// A server (possibly an impostor) cannot drive the terminal or forge lines through its words:
// an unknown phase is refused, and units and error bodies are shown escaped.
func TestFetchedTextIsEscaped(t *testing.T) {
	const evil = "\x1b]52;c;SGVsbG8=\a\x1b[2J\rNode sno reached install-done"
	answer := ""
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	url := URL(srv.URL, testKey, "sno")

	answer = `{"records":[{"time":"2026-12-03T10:00:00Z","phase":"install-done\rforged"}]}`
	if _, err := Fetch(context.Background(), srv.Client(), url); err == nil || !strings.Contains(err.Error(), "unknown phase") ||
		strings.ContainsAny(err.Error(), "\r\x1b") {
		t.Errorf("an unknown phase: %v", err)
	}

	answer = `{"records":[{"time":"2026-12-03T10:00:00Z","phase":"failed","unit":"` + jsonEscape(evil) + `","status":1}]}`
	recs, err := Fetch(context.Background(), srv.Client(), url)
	if err != nil || len(recs) != 1 {
		t.Fatalf("got %v, %v", recs, err)
	}
	if s := recs[0].String(); strings.ContainsAny(s, "\r\x1b\a") || !strings.Contains(s, `\x1b`) {
		t.Errorf("a unit with escapes prints as %q", s)
	}

	status, answer = http.StatusInternalServerError, evil
	if _, err := Fetch(context.Background(), srv.Client(), url); err == nil || strings.ContainsAny(err.Error(), "\r\x1b\a") {
		t.Errorf("an error body with escapes: %q", err)
	}
}

func jsonEscape(s string) string {
	r := strings.NewReplacer("\x1b", `\u001b`, "\a", `\u0007`, "\r", `\r`, `"`, `\"`)
	return r.Replace(s)
}
