package coreos

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestInstallScriptsRun runs the rendered install-to-disk.sh with bash, its /opt/openshift
// moved into a temporary directory and stand-ins for coreos-installer and shutdown that note
// their runs: the pre-install scripts run in order before the disk write, the post-install
// ones after it and before the reboot; a failing script stops the install there, with a line
// naming it and its exit status, and the script exits with InstallScriptFailedStatus, on which
// the unit does not restart (so the disk is not written again).
func TestInstallScriptsRun(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	for _, c := range []struct {
		name       string
		failing    string // the script that exits 3
		wantEvents []string
		wantDone   bool // coreos-installer.done written
	}{
		{"all succeed", "", []string{"pre-a", "pre-b", "coreos-installer", "post-c", "shutdown"}, true},
		{"pre-install fails", "pre-b", []string{"pre-a", "pre-b"}, false},
		{"post-install fails", "post-c", []string{"pre-a", "pre-b", "coreos-installer", "post-c"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			events := filepath.Join(dir, "events")
			script := func(name, body string) string {
				path := filepath.Join(dir, "bin", name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("#!/bin/sh\necho "+name+" >>"+events+"\n"+body), 0o700); err != nil {
					t.Fatal(err)
				}
				return path
			}
			hook := func(name string) string {
				if name == c.failing {
					return script(name, "exit 3\n")
				}
				return script(name, "")
			}
			script("coreos-installer", "")
			script("shutdown", "")
			inst := Installation{Disk: "/dev/vda", PreInstall: []string{hook("pre-a"), hook("pre-b")}, PostInstall: []string{hook("post-c")}}
			if _, err := inst.Validate(); err != nil {
				t.Fatal(err)
			}
			opt := filepath.Join(dir, "opt", "openshift")
			if err := os.MkdirAll(opt, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(opt, ".bootkube.done"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			rendered := strings.ReplaceAll(RenderInstallToDiskScript(inst, false), "/opt/openshift", opt)
			cmd := exec.Command(bash, "-c", rendered)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			code := cmd.ProcessState.ExitCode()
			want := 0
			if c.failing != "" {
				want = InstallScriptFailedStatus
			}
			if code != want {
				t.Fatalf("exit %d (%v), want %d:\n%s", code, err, want, out)
			}
			if c.failing != "" {
				kind, _, _ := strings.Cut(c.failing, "-")
				want := "The " + kind + "-install script " + filepath.Join(dir, "bin", c.failing) + " failed with exit status 3: the install stops here"
				if !strings.Contains(string(out), want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			}
			got, _ := os.ReadFile(events)
			if lines := strings.Fields(string(got)); !slices.Equal(lines, c.wantEvents) {
				t.Errorf("ran %v, want %v", lines, c.wantEvents)
			}
			if _, err := os.Stat(filepath.Join(opt, "coreos-installer.done")); (err == nil) != c.wantDone {
				t.Errorf("coreos-installer.done written: %v, want %v", err == nil, c.wantDone)
			}
		})
	}
}
