package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	reports "github.com/sno-iso/sno-iso/progress"
)

// wait reads what a local serve recorded beside the node: it prints the phases, exits 0 at
// the target, 1 with the journal at a failure, 1 naming the last phase when time is up, and
// refuses a phase nobody waits for.
func TestWaitLocalReports(t *testing.T) {
	nodes := t.TempDir()
	dir := filepath.Join(nodes, "sno")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	store := &reports.FileStore{Dir: filepath.Join(nodes, reports.DirName)}
	add := func(r reports.Report) {
		if _, err := store.Add("sno", reports.Record{Report: r, Time: time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	add(reports.Report{Phase: reports.LiveBooted})
	add(reports.Report{Phase: reports.BootkubeDone})
	r := sno(t, nil, "wait", "--node", dir, "--for", "bootkube-done", "--interval", "10ms")
	if r.code != 0 || !strings.Contains(string(r.stdout), "sno 2026-12-03T11:00:00Z live-booted\nsno 2026-12-03T11:00:00Z bootkube-done\n") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = sno(t, nil, "wait", "--node", dir, "--for", "install-done", "--timeout", "300ms", "--interval", "10ms")
	if r.code != 1 || !strings.Contains(string(r.stderr), "did not reach install-done within") || !strings.Contains(string(r.stderr), "the last phase it reported is bootkube-done") {
		t.Fatalf("timeout: exit %d\n%s", r.code, r.stderr)
	}
	status := 1
	add(reports.Report{Phase: reports.Failed, Unit: "install-to-disk.service", Status: &status, Log: "Installing to /dev/sda\nError: no such disk"})
	r = sno(t, nil, "wait", "--node", dir, "--for", "install-done", "--interval", "10ms")
	for _, want := range []string{"unit=install-to-disk.service status=1", "  | Error: no such disk"} {
		if r.code != 1 || !strings.Contains(string(r.stderr), want) {
			t.Errorf("failure: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	if r := sno(t, nil, "wait", "--node", dir, "--for", "failed"); r.code != 2 {
		t.Errorf("--for failed: exit %d, want a usage error", r.code)
	}
}
