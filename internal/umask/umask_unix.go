//go:build unix

package umask

import (
	"syscall"
	"testing"
)

// Permissive clears the process's umask for the rest of the test, so that any mode narrower
// than 0666 is the code's own doing.
func Permissive(t testing.TB) {
	t.Helper()
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
}
