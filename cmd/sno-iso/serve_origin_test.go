package main

import (
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// An origin that refuses connections when serve starts is a readiness state, not an exit:
// serve keeps running, alive and not ready with the reason, and becomes ready once the
// origin listens.
func TestServeOriginDownAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	nodes := t.TempDir()
	serveNodeDir(t, nodes, "sno", serveSnoYAML)
	s := startServe(t, "--iso", "http://"+addr+"/x.iso", "--nodes", nodes)
	status := func(path string) (int, string) {
		resp, body := s.get(t, s.url+path)
		return resp.StatusCode, string(body)
	}
	if code, body := status("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with the origin down: %d %s", code, body)
	}
	if code, body := status("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/readyz with the origin down: %d %s", code, body)
	}

	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	origin := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(iso)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		w.Header().Set("ETag", `"x-v1"`)
		http.ServeContent(w, r, "", time.Time{}, f)
	})}
	go origin.Serve(ln)
	defer origin.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := status("/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not become ready once the origin answered: %d %s\n%s", code, body, s.output())
		}
	}
	if resp, body := s.get(t, s.urls(t, nodes, "sno")["iso"]); resp.StatusCode != http.StatusOK || int64(len(body)) != fileSize(t, iso) {
		t.Errorf("the node's ISO once ready: %d, %d bytes", resp.StatusCode, len(body))
	}
	if strings.Count(s.output(), "connection refused; trying again") != 1 {
		t.Errorf("the reason is not logged once:\n%s", s.output())
	}
	s.stop(t)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}
