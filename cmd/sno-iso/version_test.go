package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestVersionWithoutLdflags: a binary built by plain go build or go install reports the
// module version and commit that the Go tool recorded in it, as `go version -m` shows them,
// through --version and the version command alike.
func TestVersionWithoutLdflags(t *testing.T) {
	bin := snoISO(t)
	recorded, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var modVersion, revision, modified string
	for _, line := range strings.Split(string(recorded), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 3 && fields[0] == "mod":
			modVersion = fields[2]
		case len(fields) == 2 && strings.HasPrefix(fields[1], "vcs.revision="):
			revision = strings.TrimPrefix(fields[1], "vcs.revision=")
		case len(fields) == 2 && fields[1] == "vcs.modified=true":
			modified = "-dirty"
		}
	}
	want := "sno-iso version " + modVersion + " (" + runtime.Version() + ")\n"
	if revision != "" {
		want = "sno-iso version " + modVersion + " (commit " + revision + modified + ", " + runtime.Version() + ")\n"
	}
	if got := string(mustSno(t, nil, "--version")); got != want {
		t.Fatalf("--version printed %q, want %q (from go version -m)", got, want)
	}
	// kubectl's, oc's and openshift-install's spelling prints the same.
	if got := string(mustSno(t, nil, "version")); got != want {
		t.Fatalf("version printed %q, want %q, as --version", got, want)
	}
}
