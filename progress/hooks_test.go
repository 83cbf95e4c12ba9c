package progress

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// runReporter runs the generated sno-iso-report with shell, against url, with a journalctl
// that prints journal, and the given environment (what systemd sets for ExecStopPost).
func runReporter(t *testing.T, shell []string, url, journal string, env []string, args ...string) string {
	t.Helper()
	return runReporterCA(t, shell, url, nil, journal, env, args...)
}

// runReporterCA is runReporter with the certificate of an https URL's server.
func runReporterCA(t *testing.T, shell []string, url string, ca []byte, journal string, env []string, args ...string) string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(reporterScript, URLPath, filepath.Join(root, "report-url"))
	script = strings.ReplaceAll(script, CAPath, filepath.Join(root, "ca.pem"))
	if ca != nil {
		if err := os.WriteFile(filepath.Join(root, "ca.pem"), ca, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "sno-iso-report"): script,
		filepath.Join(root, "report-url"):     url + "\n",
		filepath.Join(root, "journal"):        journal,
		filepath.Join(bin, "journalctl"):      "#!/bin/sh\n[ \"$1 $2\" = '--unit install-to-disk.service' ] || exit 1\ncat " + filepath.Join(root, "journal") + "\n",
	}
	for path, data := range files {
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	curl := testenv.Tool(t, "curl", "curl")
	for _, tool := range []string{"tr", "sed", "awk", "tail", "mktemp", "cat", "rm", "printf", "dirname", "mkdir"} {
		if p, err := exec.LookPath(tool); err == nil {
			os.Symlink(p, filepath.Join(bin, tool))
		}
	}
	os.Symlink(curl, filepath.Join(bin, "curl"))
	cmd := exec.Command(shell[0], append(append(shell[1:], filepath.Join(root, "sno-iso-report")), args...)...)
	cmd.Env = append([]string{"PATH=" + bin}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sno-iso-report %v exited %v:\n%s", args, err, out)
	}
	return string(out)
}

func shells(t *testing.T) map[string][]string {
	s := map[string][]string{"sh": {"/bin/sh"}}
	if _, err := os.Stat("/bin/busybox"); err == nil {
		s["busybox"] = []string{"/bin/busybox", "sh"}
	} else {
		testenv.Missing(t, "/bin/busybox (Debian package busybox-static)")
	}
	return s
}

// The reporter the units run sends what the handler records: the phase, and for a failed
// unit its name, exit status and journal with quotes, backslashes and tabs intact, control
// characters dropped. It runs under dash and under busybox sh (the look-alike's).
func TestReporterScript(t *testing.T) {
	for name, shell := range shells(t) {
		t.Run(name, func(t *testing.T) {
			store := &MemoryStore{}
			srv, _ := testServer(t, store)
			url := URL(srv.URL, testKey, "sno")
			journal := "Installing to /dev/vda\n\"quoted\" back\\slash\ttab\x1b[2J\ncoreos-installer: error: no such disk\n"
			runReporter(t, shell, url, journal, nil, "live-booted")
			runReporter(t, shell, url, journal, []string{"SERVICE_RESULT=success", "EXIT_CODE=exited", "EXIT_STATUS=0"},
				"--stopped", "bootkube.service", "bootkube-done")
			// Stopped by systemd at shutdown: nothing to say.
			runReporter(t, shell, url, journal, []string{"SERVICE_RESULT=success", "EXIT_CODE=killed", "EXIT_STATUS=TERM"},
				"--stopped", "bootkube.service", "bootkube-done")
			runReporter(t, shell, url, journal, []string{"SERVICE_RESULT=exit-code", "EXIT_CODE=exited", "EXIT_STATUS=1"},
				"--stopped", "install-to-disk.service")
			recs, _ := store.Records("sno")
			var phases []string
			for _, r := range recs {
				phases = append(phases, string(r.Phase))
			}
			if strings.Join(phases, " ") != "live-booted bootkube-done failed" {
				t.Fatalf("recorded %v", phases)
			}
			f := recs[2]
			want := "install-to-disk.service: result exit-code (exited 1)\nInstalling to /dev/vda\n\"quoted\" back\\slash\ttab[2J\ncoreos-installer: error: no such disk"
			if f.Unit != "install-to-disk.service" || f.Status == nil || *f.Status != 1 || f.Log != want {
				t.Errorf("failure recorded as unit %q status %v log %q", f.Unit, f.Status, f.Log)
			}
		})
	}
}

// A server that is away costs a few seconds and never a failed unit.
func TestReporterGivesUp(t *testing.T) {
	out := runReporter(t, []string{"/bin/sh"}, "http://127.0.0.1:1/x/sno/report", "", nil, "live-booted")
	if !strings.Contains(out, "could not report live-booted") {
		t.Errorf("output: %s", out)
	}
}

// --once reports until the report went through, then never again.
func TestReporterOnce(t *testing.T) {
	store := &MemoryStore{}
	srv, _ := testServer(t, store)
	marker := filepath.Join(t.TempDir(), "sub", "done")
	runReporter(t, []string{"/bin/sh"}, "http://127.0.0.1:1/x/sno/report", "", nil, "--once", marker, "installed-booted")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("marker made though the report failed")
	}
	runReporter(t, []string{"/bin/sh"}, URL(srv.URL, testKey, "sno"), "", nil, "--once", marker, "installed-booted")
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("no marker after the report", err)
	}
	if recs, _ := store.Records("sno"); len(recs) != 1 || recs[0].Phase != InstalledBooted {
		t.Fatalf("%v", recs)
	}
}

// Over https the reporter verifies the server with the certificate the hooks carry, and
// sends nothing to a server it cannot verify.
func TestReporterHTTPS(t *testing.T) {
	store := &MemoryStore{}
	h := &Handler{Keys: func() [][]byte { return [][]byte{testKey} }, Known: func(string) bool { return true }, Store: store}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	ca, err := TrustAnchor(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	if err != nil {
		t.Fatal(err)
	}
	url := URL(srv.URL, testKey, "sno")
	out := runReporterCA(t, []string{"/bin/sh"}, url, nil, "", nil, "live-booted")
	if recs, _ := store.Records("sno"); len(recs) != 0 || !strings.Contains(out, "could not report") {
		t.Fatalf("reported to an unverified server: %v %s", recs, out)
	}
	runReporterCA(t, []string{"/bin/sh"}, url, ca, "", nil, "live-booted")
	if recs, _ := store.Records("sno"); len(recs) != 1 {
		t.Fatalf("not reported with the CA: %v", recs)
	}
	if _, err := TrustAnchor([]byte("not PEM")); err == nil {
		t.Error("TrustAnchor accepted no certificate")
	}
}

// The reporter is plain POSIX sh that shellcheck finds nothing in.
func TestReporterShellcheck(t *testing.T) {
	shellcheck := testenv.Tool(t, "shellcheck", "shellcheck")
	cmd := exec.Command(shellcheck, "--shell=sh", "-")
	cmd.Stdin = strings.NewReader(reporterScript)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}
