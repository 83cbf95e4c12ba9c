package isobuilder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
	"github.com/sno-iso/sno-iso/internal/input"
)

// lockPoll is how often a waiting editor tries the lock again.
const lockPoll = 20 * time.Millisecond

// ErrLocked is returned by OpenForEdit when another editor still holds the ISO's lock after
// the wait.
var ErrLocked = errors.New("another program is editing this ISO in place")

// ErrReadOnlyISO is returned by OpenForEdit for an ISO file without write permission: root
// could write it anyway, but someone made it read-only to keep it as it is.
var ErrReadOnlyISO = errors.New("the ISO file is read-only")

// OpenForEdit opens the live ISO at path for an in-place edit. It takes an exclusive lock on
// the file first, waiting up to wait for another editor to release it, and only then reads
// the volume and the areas, so that an edit starts from what the previous one wrote and two
// edits never interleave. The lock is held until Close. Readers that Open take no lock; those
// that OpenToCopy wait for the edit and hold it off.
func OpenForEdit(ctx context.Context, path string, wait time.Duration) (*LiveISO, error) {
	// Read-write: the edit needs it anyway, so a read-only ISO fails before any work, and
	// NFS grants an exclusive lock only to a descriptor open for writing.
	f, info, err := input.Open(path, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("opening for an in-place edit: %w", err)
	}
	if info.Mode().Perm()&0o222 == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: %w (mode %v)", path, ErrReadOnlyISO, info.Mode().Perm())
	}
	return openLocked(path, f, info, func() error { return waitForLock(ctx, f, wait, filelock.Exclusive) })
}

// OpenToCopy opens the live ISO at path for a reader whose output must come from one
// version of it (a copy written with -o): it takes a shared lock, waiting up to wait for an
// in-place editor to finish, and holds it until Close, so that no OpenForEdit edit lands
// while it reads. Where the file system has no locks, it reads unlocked, as Open does.
func OpenToCopy(ctx context.Context, path string, wait time.Duration) (*LiveISO, error) {
	f, info, err := input.Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return openLocked(path, f, info, func() error {
		if err := waitForLock(ctx, f, wait, filelock.Shared); errors.Is(err, ErrLocked) || ctx.Err() != nil {
			return err
		}
		return nil
	})
}

// openLocked checks that f, opened from path, is an ISO file, locks it and parses it; f is
// closed on error.
func openLocked(path string, f *os.File, info fs.FileInfo, lock func() error) (*LiveISO, error) {
	err := checkISOFileKind(info)
	if err == nil {
		err = lock()
	}
	var l *LiveISO
	if err == nil {
		l, err = openOSFile(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// waitForLock takes a lock of the given mode on f, waiting until it is free, wait has passed
// or ctx ends.
func waitForLock(ctx context.Context, f *os.File, wait time.Duration, mode filelock.Mode) error {
	err := filelock.Wait(ctx, f, mode, lockPoll, wait, nil)
	switch {
	case errors.Is(err, filelock.ErrBusy):
		return fmt.Errorf("%w (waited %s)", ErrLocked, wait)
	case err != nil && ctx.Err() == nil:
		return fmt.Errorf("locking the ISO: %w", err)
	}
	return err
}
