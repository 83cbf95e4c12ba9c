package main

import (
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// serve keeps its memory near what its node cache allows: the Go memory limit is the cache's
// budget and 64 MiB for the rest (nodes dropped from the cache are garbage, collected before
// the heap doubles), unless GOMEMLIMIT says otherwise.
func TestServeMemoryLimitFromNodeCache(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	serveNodeDir(t, nodes, "sno", serveSnoYAML)
	limit := func(args ...string) string {
		t.Helper()
		s := startServe(t, append([]string{"--iso", iso, "--nodes", nodes}, args...)...)
		resp, err := http.Get(s.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("no go_gc_gomemlimit_bytes in /metrics:\n%s", body)
		}
		return string(m[1])
	}
	if got := limit(); got != "1.00663296e+08" { // 32 + 64 MiB
		t.Errorf("default memory limit %s, want 96 MiB", got)
	}
	if got := limit("--node-cache-size", "128MiB"); got != "2.01326592e+08" { // 128 + 64 MiB
		t.Errorf("memory limit with --node-cache-size 128MiB: %s, want 192 MiB", got)
	}
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := limit(); got != "3.145728e+08" {
		t.Errorf("memory limit with GOMEMLIMIT=300MiB: %s, want 300 MiB", got)
	}
}
