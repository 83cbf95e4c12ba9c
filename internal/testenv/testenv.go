// Package testenv decides what a test does when something it needs is missing: a tool, a
// Debian package, a fixture or a privilege. A developer's run skips with a message naming
// what is missing; a CI run (CI set in the environment, as .ci/run runs) fails instead, so a
// moved fixture or an uninstalled package cannot turn into a green run that tested nothing.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI, where nothing may be skipped for want of a
// tool, package, fixture or privilege.
func InCI() bool { return os.Getenv("CI") != "" }

// Missing ends the test because something it needs is not there: a skip on a developer's
// machine, a failure in CI. The message names what is missing and how to get it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI requires this test to run, but: %s", msg)
	}
	t.Skip(msg)
}

// Tool returns the path of an executable on PATH, or ends the test through Missing naming
// the Debian package that provides it.
func Tool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed (Debian package %s; scripts/install-deps installs it as root)", name, debianPackage)
	}
	return p
}

// Root ends the test through Missing unless it runs as root.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root: %s", why)
	}
}

// Long skips the test under -short. It is a developer's choice, never a missing tool, so it
// skips in CI too; CI does not pass -short.
func Long(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s; skipped with -short", what)
	}
}
