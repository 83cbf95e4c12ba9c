package main

import (
	"strings"
	"testing"
)

// TestSuggestionsWhateverFollows: a mistyped command is named with the nearest one whatever
// options follow it (they belong to the command meant, not to the group it was looked for
// in); an unknown short option names the option of this command that it stands for in
// others; an enum value names the valid value meant, typo or another tool's name. Each is a
// usage error (exit 2).
func TestSuggestionsWhateverFollows(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bulid", "--iso", "x.iso", "--ignition", "x.ign"}, `unknown command "bulid"; did you mean "build"?`},
		{[]string{"bulid", "-o", "x.iso"}, `unknown command "bulid"; did you mean "build"?`},
		{[]string{"ignition", "embd", "-i", "x.ign", "x.iso"}, `unknown command "embd"; did you mean "embed"?`},
		{[]string{"pxe", "biuld", "--iso", "x.iso"}, `unknown command "biuld"; did you mean "build"?`},
		{[]string{"serve", "url", "--nodes", "nodes"}, `unknown command "url"; did you mean "urls"?`},
		{[]string{"build", "-i", "x.ign"}, "unknown option -i; did you mean --ignition?"},
		{[]string{"build", "-k", "eth0.nmconnection"}, "unknown option -k; did you mean --network-keyfile?"},
		{[]string{"build", "--ignitoin", "x.ign"}, "unknown option --ignitoin; did you mean --ignition?"},
		{[]string{"download", "--stream", "s.json", "--format", "pxi"}, `--format must be iso or pxe, got "pxi"; did you mean "pxe"?`},
		{[]string{"bmc", "boot", "--bmc", "https://127.0.0.1:1", "--iso-url", "http://127.0.0.1:1/x.iso", "--boot-mode", "efi"},
			`--boot-mode must be uefi or legacy, got "efi"; did you mean "uefi"?`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := sno(t, nil, c.args...)
			if r.code != 2 || !strings.Contains(string(r.stderr), c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, c.want)
			}
		})
	}
}

// TestDownloadArchSuggestsStreamName: --arch arm64 (Go's and Debian's name) names the
// stream's aarch64, and a typo the architecture meant; both are usage errors.
func TestDownloadArchSuggestsStreamName(t *testing.T) {
	f := newDownloadFixture(t, 0)
	for arch, want := range map[string]string{"amd64": "did you mean --arch x86_64?", "x86_46": "did you mean --arch x86_64?"} {
		r := sno(t, nil, "download", "--stream", f.stream, "--arch", arch, "--cache-dir", f.cache)
		if r.code != 2 || !strings.Contains(string(r.stderr), `no architecture "`+arch+`"`) || !strings.Contains(string(r.stderr), want) {
			t.Errorf("--arch %s: exit %d, stderr %q; want exit 2 and %q", arch, r.code, r.stderr, want)
		}
	}
}

// TestNearestValue: another tool's architecture names and typos map to the valid value;
// nothing near gives "".
func TestNearestValue(t *testing.T) {
	arches := []string{"aarch64", "ppc64le", "s390x", "x86_64"}
	for value, want := range map[string]string{"arm64": "aarch64", "ARM64": "aarch64", "amd64": "x86_64", "ppc64el": "ppc64le",
		"aarch46": "aarch64", "riscv64": ""} {
		if got := nearestValue(value, arches); got != want {
			t.Errorf("nearestValue(%q) = %q, want %q", value, got, want)
		}
	}
}
