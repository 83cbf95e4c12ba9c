package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runTestsum runs testsum on go test -json in a module made of files and returns its output
// and exit code.
func runTestsum(t *testing.T, files map[string]string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.22\n"
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "testsum")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	events := filepath.Join(t.TempDir(), "events.json")
	cmd := exec.Command(bin, "-json", events, "--", "go", "test", "-json", "./a/...", "---", "go", "test", "-json", "./b/...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=", "GOFLAGS=")
	out, _ := cmd.CombinedOutput()
	if data, err := os.ReadFile(events); err != nil || !strings.Contains(string(data), `"Action":"pass"`) {
		t.Errorf("the events file: %v\n%s", err, data)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestSummaryCountsAndNamesSkips(t *testing.T) {
	out, code := runTestsum(t, map[string]string{
		"a/a_test.go": `package a

import "testing"

func TestPass(t *testing.T) { t.Log("quiet when passing") }
func TestSkip(t *testing.T) { t.Skip("xorriso is not installed") }
func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("skipped", func(t *testing.T) { t.Skip("no pipes") })
}
`,
		"b/b_test.go": `package b

import "testing"

func TestFail(t *testing.T) { t.Error("the bytes differ") }
func TestPass(t *testing.T) {}
`,
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Passed: a.TestPass, a.TestSub/ok, a.TestSub (a parent passes when a child skips), b.TestPass.
	if last := lines[len(lines)-1]; last != "4 passed, 1 failed, 2 skipped" {
		t.Errorf("closing line %q\n%s", last, out)
	}
	for _, want := range []string{
		"skipped: example.com/m/a TestSkip: a_test.go:6: xorriso is not installed",
		"skipped: example.com/m/a TestSub/skipped: a_test.go:9: no pipes",
		"failed: example.com/m/b TestFail",
		"b_test.go:5: the bytes differ",
		"ok  \texample.com/m/a",
		"FAIL\texample.com/m/b",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "quiet when passing") {
		t.Errorf("a passing test's log is printed:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit code %d with a failed test, want 1", code)
	}
}

// A package that does not build has no failed test, yet the run fails and the count says so.
func TestSummaryCountsBuildFailure(t *testing.T) {
	out, code := runTestsum(t, map[string]string{
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; last != "1 passed, 1 failed, 0 skipped" {
		t.Errorf("closing line %q\n%s", last, out)
	}
	if !strings.Contains(out, "undefined: undefined") || !strings.Contains(out, "failed: example.com/m/b") {
		t.Errorf("the output does not show the build failure:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit code %d with a package that does not build, want 1", code)
	}
}

func TestSummaryAllPassExitsZero(t *testing.T) {
	out, code := runTestsum(t, map[string]string{
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
	})
	if !strings.HasSuffix(out, "\n2 passed, 0 failed, 0 skipped\n") || code != 0 {
		t.Errorf("exit code %d, output:\n%s", code, out)
	}
}
