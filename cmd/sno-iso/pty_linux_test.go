package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// openPTY returns a new pseudo-terminal's two ends, or skips the test where there is none.
func openPTY(t testing.TB) (master, terminal *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Missing(t, "no pseudo-terminals here (/dev/ptmx: %v)", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		testenv.Missing(t, "cannot unlock a pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		testenv.Missing(t, "cannot name the pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Missing(t, "cannot open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}
