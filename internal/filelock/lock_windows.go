//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

const supported = true

// lockOffset is the byte locked: far past any real file's end, because Windows locks are
// mandatory for I/O and a lock on data would stop readers that take no lock.
const lockOffset = 1 << 62

func tryLock(f *os.File, mode Mode) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if mode == Exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) error {
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
