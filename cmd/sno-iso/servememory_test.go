package main

import (
	"net"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// serve keeps its memory near what its node cache allows: the Go memory limit is the cache's
// budget and 64 MiB for the rest (nodes dropped from the cache are garbage, collected before
// the heap doubles), and 32 MiB more for the origin's block cache when the ISO is a URL, unless
// GOMEMLIMIT says otherwise.
func TestServeMemoryLimitFromNodeCache(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	serveNodeDir(t, nodes, "sno", serveSnoYAML)
	limit := func(args ...string) string {
		t.Helper()
		s := startServe(t, append([]string{"--iso", iso, "--nodes", nodes}, args...)...)
		return memoryLimit(t, s.url)
	}
	if got := limit(); got != "1.00663296e+08" { // 32 + 64 MiB
		t.Errorf("default memory limit %s, want 96 MiB", got)
	}
	if got := limit("--node-cache-size", "128MiB"); got != "2.01326592e+08" { // 128 + 64 MiB
		t.Errorf("memory limit with --node-cache-size 128MiB: %s, want 192 MiB", got)
	}
	// An origin that is down at start: serve runs, not ready, with its limit set.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	s := startServe(t, "--iso", "http://"+ln.Addr().String()+"/x.iso", "--nodes", nodes)
	if got := memoryLimit(t, s.url); got != "1.34217728e+08" { // 32 + 64 + 32 MiB
		t.Errorf("memory limit with an http:// ISO: %s, want 128 MiB (with the origin's block cache)", got)
	}
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := limit(); got != "3.145728e+08" {
		t.Errorf("memory limit with GOMEMLIMIT=300MiB: %s, want 300 MiB", got)
	}
}

// memoryLimit is the Go memory limit the serve at url reports in /metrics.
func memoryLimit(t *testing.T, url string) string {
	t.Helper()
	limit, ok := metricText(t, url, "go_gc_gomemlimit_bytes")
	if !ok {
		t.Fatalf("no go_gc_gomemlimit_bytes in /metrics of %s", url)
	}
	return limit
}
