package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestErrorsLeaveNothingBehind runs each error a user will hit and checks the promise: exit
// non-zero with "Error: " and a message naming the problem, no output file, no temp file, the
// input untouched.
func TestErrorsLeaveNothingBehind(t *testing.T) {
	good := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	synthetic := fixtures.File(t, "synthetic.iso")
	truncated := filepath.Join(t.TempDir(), "truncated.iso")
	b := fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")
	os.WriteFile(truncated, b[:len(b)/4], 0o644)
	cfg := filepath.Join(t.TempDir(), "config.ign")
	os.WriteFile(cfg, []byte(smallConfig), 0o644)

	cases := []struct {
		name  string
		input string
		args  func(out string) []string
		want  []string
		code  int
		// existing makes the output exist before the run.
		existing bool
	}{
		{"not a CoreOS ISO", synthetic, func(out string) []string { return []string{"ignition", "embed", "-i", cfg, "-o", out, synthetic} }, []string{"unrecognized CoreOS ISO image"}, 1, false},
		{"not a CoreOS ISO in place", synthetic, func(string) []string { return []string{"ignition", "embed", "-i", cfg, synthetic} }, []string{"unrecognized CoreOS ISO image"}, 1, false},
		{"truncated ISO", truncated, func(out string) []string { return []string{"ignition", "embed", "-i", cfg, "-o", out, truncated} }, []string{"ISO image is incomplete"}, 1, false},
		{"existing output", good, func(out string) []string { return []string{"ignition", "embed", "-i", cfg, "-o", out, good} }, []string{"exists", "--force"}, 1, true},
		{"existing output on remove", good, func(out string) []string { return []string{"ignition", "remove", "-o", out, good} }, []string{"exists", "--force"}, 1, true},
		{"missing input", good, func(out string) []string {
			return []string{"ignition", "embed", "-i", cfg, "-o", out, "/nonexistent/rhcos.iso"}
		}, []string{"no such file"}, 1, false},
		{"directory as input", good, func(out string) []string { return []string{"ignition", "embed", "-i", cfg, "-o", out, t.TempDir()} }, []string{"not a regular file"}, 1, false},
		{"missing config file", good, func(out string) []string {
			return []string{"ignition", "embed", "-i", "/nonexistent.ign", "-o", out, good}
		}, []string{"no such file"}, 1, false},
		{"output is the input", good, func(string) []string { return []string{"ignition", "embed", "-i", cfg, "-f", "-o", good, good} }, []string{"the output is one of the inputs (the ISO itself)"}, 1, false},
		{"no ISO argument", good, func(out string) []string { return []string{"ignition", "embed", "-i", cfg, "-o", out} }, []string{"exactly one ISO"}, 2, false},
		{"missing required option", good, func(out string) []string { return []string{"build", "--ignition", cfg, "-o", out} }, []string{"needs --iso"}, 2, false},
		{"unknown option", good, func(out string) []string { return []string{"ignition", "embed", "--frobnicate", "-o", out, good} }, []string{"frobnicate"}, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fileSHA(t, c.input)
			dir := t.TempDir()
			out := filepath.Join(dir, "out.iso")
			if c.existing {
				os.WriteFile(out, []byte("keep me"), 0o644)
			}
			r := sno(t, nil, c.args(out)...)
			wantFailure(t, r, c.want...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d", r.code, c.code)
			}
			if fileSHA(t, c.input) != before {
				t.Error("the input changed")
			}
			ents := dirEntries(t, dir)
			if c.existing {
				if got, _ := os.ReadFile(out); string(got) != "keep me" || len(ents) != 1 {
					t.Errorf("existing output touched or temp files left: %v", ents)
				}
			} else if len(ents) != 0 {
				t.Errorf("left behind %v", ents)
			}
		})
	}
}

// TestForceReplacesExistingOutput: --force is the way past an existing output.
func TestForceReplacesExistingOutput(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	out := filepath.Join(t.TempDir(), "out.iso")
	os.WriteFile(out, []byte("old"), 0o644)
	mustSno(t, []byte(smallConfig), "ignition", "embed", "--force", "-o", out, iso)
	if got := mustSno(t, nil, "ignition", "show", out); string(got) != smallConfig {
		t.Fatalf("show = %q", got)
	}
}

// TestRefusesBinaryToTerminal gives the binary a pseudo-terminal as standard output.
func TestRefusesBinaryToTerminal(t *testing.T) {
	_, pts := openPTY(t)
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	cmd := exec.Command(snoISO(t), "ignition", "embed", "-o", "-", iso)
	cmd.Stdin = bytes.NewReader([]byte(smallConfig))
	cmd.Stdout = pts
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatal("wrote an ISO to a terminal")
	}
	if !bytes.Contains(stderr.Bytes(), []byte("refusing to write binary data to a terminal")) {
		t.Fatalf("stderr = %q", stderr.Bytes())
	}
}
