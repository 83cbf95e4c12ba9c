// Package filelock is sno-iso's one advisory file lock: flock on Unix, LockFileEx on
// Windows, none elsewhere. A lock belongs to the open file: closing it, or the death of the
// process, releases it, so a free lock tells that its last holder is gone.
package filelock

import (
	"context"
	"errors"
	"os"
	"time"
)

// Mode is the kind of lock: many Shared holders, or one Exclusive holder.
type Mode int

const (
	// Exclusive excludes every other lock.
	Exclusive Mode = iota
	// Shared admits other Shared locks.
	Shared
)

// Supported reports whether locks exclude other processes on this platform; where they do
// not, TryLock always succeeds and a free lock tells nothing about its holder.
const Supported = supported

// Forever is a patience that never runs out.
const Forever = time.Duration(1<<63 - 1)

// ErrBusy is Wait's error when another holder still has the lock after the patience.
var ErrBusy = errors.New("another process holds the lock")

// TryLock takes a lock of the given mode on f without waiting: false when another open file
// holds a lock that conflicts.
func TryLock(f *os.File, mode Mode) (bool, error) { return tryLock(f, mode) }

// Unlock releases f's lock (closing f does too).
func Unlock(f *os.File) error { return unlock(f) }

// Wait takes a lock of the given mode on f, trying every poll while another holds it, until
// patience has passed (ErrBusy) or ctx ends (its error). onWait, when set, is called once,
// before the first wait.
func Wait(ctx context.Context, f *os.File, mode Mode, poll, patience time.Duration, onWait func()) error {
	deadline := time.Now().Add(patience)
	for waited := false; ; waited = true {
		locked, err := tryLock(f, mode)
		if err != nil || locked {
			return err
		}
		if !time.Now().Before(deadline) {
			return ErrBusy
		}
		if !waited && onWait != nil {
			onWait()
		}
		t := time.NewTimer(min(poll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
