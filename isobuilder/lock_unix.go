//go:build unix

package isobuilder

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive advisory lock (flock) on f without blocking. It reports false
// when another open file holds the lock. The lock goes with f's descriptor: closing f
// releases it, also when the process is killed.
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, unix.EINTR):
			return false, err
		}
	}
}

// locksShowOwner says that a free lock on a temporary means its maker is gone.
const locksShowOwner = true
