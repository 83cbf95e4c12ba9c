//go:build !unix

package umask

import "testing"

// Permissive skips the test: file modes and the umask are POSIX notions.
func Permissive(t testing.TB) {
	t.Helper()
	t.Skip("file modes and the umask are POSIX notions; nothing to check on this platform")
}
