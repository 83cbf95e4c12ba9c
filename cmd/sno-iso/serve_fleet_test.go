package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// --admin-listen moves health, readiness and metrics off the nodes' address, and
// --log-format json writes one JSON object a line, without the capability tokens.
func TestServeAdminListenAndJSONLog(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	serveNodeDir(t, nodes, "sno", serveSnoYAML)
	s := startServe(t, "--iso", iso, "--nodes", nodes, "--admin-listen", "127.0.0.1:0", "--log-format", "json")
	m := regexp.MustCompile(`metrics at (http://\S+)/`).FindStringSubmatch(s.output())
	if m == nil {
		t.Fatalf("no admin address in:\n%s", s.output())
	}
	status := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if got := status(m[1] + p); got != 200 {
			t.Errorf("admin %s: %d", p, got)
		}
		if got := status(s.url + p); got != 404 {
			t.Errorf("%s on the nodes' address: %d, want 404", p, got)
		}
	}
	isoURL := s.urls(t, nodes, "sno")["iso"]
	token := strings.Split(strings.TrimPrefix(isoURL, s.url+"/"), "/")[0]
	if got := status(isoURL); got != 200 {
		t.Fatalf("%s: %d", isoURL, got)
	}
	// The token never reaches the log, in JSON as in text.
	const logged = "GET /{token}/sno.iso"
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.output(), logged) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var found bool
	for _, line := range strings.Split(s.output(), "\n") {
		if !strings.Contains(line, logged) {
			continue
		}
		var rec struct{ Time, Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level != "INFO" || rec.Time == "" {
			t.Errorf("access log line %q is not a slog JSON record: %v", line, err)
		}
		found = true
	}
	if !found {
		t.Errorf("no access log line for %s:\n%s", logged, s.output())
	}
	if strings.Contains(s.output(), token) {
		t.Errorf("the log shows the token %s:\n%s", token, s.output())
	}
	s.stop(t)
}

func TestServeFleetUsage(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	r := sno(t, nil, "serve", "--iso", iso, "--nodes", t.TempDir(), "--listen", "127.0.0.1:0", "--log-format", "xml")
	if r.code != 2 {
		t.Errorf("--log-format xml: exit %d, want 2", r.code)
	}
	wantFailure(t, r, "--log-format must be text or json")
	r = sno(t, nil, "serve", "--iso", iso, "--nodes", t.TempDir(), "--listen", "127.0.0.1:0", "--admin-listen", "9090")
	if r.code != 2 {
		t.Errorf("--admin-listen 9090: exit %d, want 2", r.code)
	}
	wantFailure(t, r, `--admin-listen "9090" is not HOST:PORT`)

	// A web server that ignores Range: the advice says what --iso needs.
	whole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("the whole file"))
	}))
	defer whole.Close()
	r = sno(t, nil, "serve", "--iso", whole.URL+"/rhcos.iso?sig=SECRET", "--nodes", t.TempDir(), "--listen", "127.0.0.1:0")
	if r.code != 1 || strings.Contains(string(r.stderr), "SECRET") {
		t.Errorf("--iso without Range support: exit %d, %s", r.code, r.stderr)
	}
	wantFailure(t, r, whole.URL+"/rhcos.iso", "Range requests", "download the ISO")
}
