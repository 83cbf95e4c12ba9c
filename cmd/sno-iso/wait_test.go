package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/nodedir"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/sno-iso/sno-iso/redfish/redfishtest"
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

// bmc boot --eject-after-install boots the node, stays until serve has its install-done,
// then ejects the media itself.
func TestBMCBootEjectAfterInstall(t *testing.T) {
	bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	nodes := t.TempDir()
	dir := writeBMCNode(t, nodes, "sno", bmc.URL()+bmc.SystemPath(), serveSnoYAML)
	if err := os.WriteFile(filepath.Join(dir, nodedir.IgnitionFile), bipConfigBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--iso", fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), "--nodes", nodes)
	store := &reports.FileStore{Dir: filepath.Join(nodes, reports.DirName)}
	if _, err := store.Add("sno", reports.Record{Report: reports.Report{Phase: reports.InstallDone}, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := snoEnv(t, nil, bmcArgs("boot", "--node", dir, "--serve-url", s.url, "--eject-after-install", "--install-timeout", "1m")...)
	slot := bmc.Resource(bmc.SystemPath() + "/VirtualMedia/Cd")
	if r.code != 0 || slot == nil || slot["Inserted"] == true || !strings.Contains(string(r.stderr), "Node sno installed: ejected 1 virtual media") {
		t.Fatalf("exit %d, slot inserted %v:\n%s", r.code, slot["Inserted"], r.stderr)
	}
	if r := snoEnv(t, nil, bmcArgs("boot", "--bmc", bmc.URL(), "--iso-url", "http://192.0.2.1/x.iso", "--eject-after-install")...); r.code != 2 {
		t.Errorf("--eject-after-install without --node: exit %d, want a usage error", r.code)
	}
}

// The records are the server's words (it may be an impostor): the journal's lines reach the
// terminal escaped, so they cannot drive it or forge a line.
func TestWaitEscapesTheJournal(t *testing.T) {
	nodes := t.TempDir()
	if err := os.MkdirAll(filepath.Join(nodes, "sno"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := &reports.FileStore{Dir: filepath.Join(nodes, reports.DirName)}
	status := 1
	rec := reports.Record{Report: reports.Report{Phase: reports.Failed, Unit: "x.service", Status: &status,
		Log: "\x1b]52;c;SGVsbG8=\a\x1b[2J\rNode sno reached install-done"}, Time: time.Now()}
	if _, err := store.Add("sno", rec); err != nil {
		t.Fatal(err)
	}
	r := sno(t, nil, "wait", "--node", filepath.Join(nodes, "sno"), "--for", "install-done", "--interval", "10ms")
	if r.code != 1 || strings.ContainsAny(string(r.stderr), "\x1b\a\r") || !strings.Contains(string(r.stderr), `  | "\x1b]52;c;`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
