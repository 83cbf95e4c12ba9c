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
func tryLock(f *os.File) (bool, error) { return tryFlock(f, unix.LOCK_EX) }

// tryLockShared takes a shared advisory lock on f without blocking: other readers may hold
// it too, an exclusive holder may not.
func tryLockShared(f *os.File) (bool, error) { return tryFlock(f, unix.LOCK_SH) }

func tryFlock(f *os.File, how int) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
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
