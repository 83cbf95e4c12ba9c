package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/isobuilder"
)

// result is what a run of the binary left behind.
type result struct {
	stdout, stderr []byte
	code           int
}

// sno runs the built binary with stdin and returns its output and exit code.
func sno(t testing.TB, stdin []byte, args ...string) result {
	t.Helper()
	return snoIn(t, "", stdin, args...)
}

// snoIn runs the binary in the working directory dir ("" for the test's own).
func snoIn(t testing.TB, dir string, stdin []byte, args ...string) result {
	t.Helper()
	return runBinary(t, snoISO(t), dir, stdin, args...)
}

// runBinary runs the sno-iso binary at bin.
func runBinary(t testing.TB, bin, dir string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	return runSno(t, cmd)
}

// runSno runs a prepared command of the binary and collects what it left behind; a standard
// output the command already has (a terminal) is kept, and nothing is collected from it.
func runSno(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	cmd.Stderr = &errb
	err := cmd.Run()
	r := result{stdout: out.Bytes(), stderr: errb.Bytes()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running sno-iso %v: %v", cmd.Args[1:], err)
	}
	return r
}

// mustSno runs the binary and fails the test unless it succeeds.
func mustSno(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	r := sno(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("sno-iso %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// wantFailure asserts a non-zero exit with stderr containing each of wants.
func wantFailure(t testing.TB, r result, wants ...string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("succeeded, want failure mentioning %q", wants)
	}
	if !bytes.HasPrefix(r.stderr, []byte("Error: ")) {
		t.Errorf("stderr does not start with \"Error: \": %q", r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(strings.ToLower(string(r.stderr)), strings.ToLower(w)) {
			t.Errorf("stderr %q does not mention %q", r.stderr, w)
		}
	}
}

func fileSHA(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytesSHA(b)
}

func bytesSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dirEntries lists the names in dir, to prove that nothing (no temp file) was left there.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// outputModes runs an ISO-editing command in the three output modes (stdout, a new file, in
// place) on copies of iso, and returns the three results' SHA-256 after checking each exit.
func outputModes(t *testing.T, iso string, stdin []byte, args ...string) [3]string {
	t.Helper()
	dir := t.TempDir()
	stream := mustSno(t, stdin, append(append(args, "-o", "-"), iso)...)
	out := filepath.Join(dir, "out.iso")
	mustSno(t, stdin, append(append(args, "-o", out), iso)...)
	inPlace := filepath.Join(dir, "inplace.iso")
	copyFile(t, iso, inPlace)
	mustSno(t, stdin, append(args, inPlace)...)
	return [3]string{bytesSHA(stream), fileSHA(t, out), fileSHA(t, inPlace)}
}

// openLiveISO opens the live ISO at path for the rest of the test.
func openLiveISO(t testing.TB, path string) *isobuilder.LiveISO {
	t.Helper()
	l, err := isobuilder.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// isoFile returns the contents of the file at an uppercase primary path of the ISO at iso.
func isoFile(t testing.TB, iso, path string) []byte {
	t.Helper()
	l := openLiveISO(t, iso)
	off, length, err := l.Locate(path)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, length)
	if _, err := l.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}
