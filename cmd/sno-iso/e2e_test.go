package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	// packageDir is where `go build .` must run; tests may run the binary elsewhere.
	packageDir, _ = os.Getwd()
	buildOnce     sync.Once
	builtPath     string
	buildErr      error
	buildOut      []byte
)

// snoISO returns the path of the sno-iso binary built from this tree, once per test run.
func snoISO(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sno-iso-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "sno-iso")
		cmd := exec.Command("go", "build", "-o", builtPath, ".")
		cmd.Dir = packageDir
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building sno-iso: %v\n%s", buildErr, buildOut)
	}
	return builtPath
}
