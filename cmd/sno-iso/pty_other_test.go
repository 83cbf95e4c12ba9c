//go:build !linux

package main

import (
	"os"
	"testing"
)

// openPTY skips the test: the terminal tests open pseudo-terminals the Linux way.
func openPTY(t testing.TB) (master, terminal *os.File) {
	t.Helper()
	t.Skip("pseudo-terminal tests run on Linux only")
	return nil, nil
}
