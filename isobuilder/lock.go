package isobuilder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sno-iso/sno-iso/internal/input"
)

// lockPoll is how often a waiting editor tries the lock again.
const lockPoll = 20 * time.Millisecond

// ErrLocked is returned by OpenForEdit when another editor still holds the ISO's lock after
// the wait.
var ErrLocked = errors.New("another program is editing this ISO in place")

// OpenForEdit opens the live ISO at path for an in-place edit. It takes an exclusive lock on
// the file first, waiting up to wait for another editor to release it, and only then reads
// the volume and the areas, so that an edit starts from what the previous one wrote and two
// edits never interleave. The lock is held until Close. Readers (Open) take no lock.
func OpenForEdit(ctx context.Context, path string, wait time.Duration) (*LiveISO, error) {
	// Read-write: the edit needs it anyway, so a read-only ISO fails before any work, and
	// NFS grants an exclusive lock only to a descriptor open for writing.
	f, info, err := input.Open(path, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("opening for an in-place edit: %w", err)
	}
	if err := checkISOFileKind(info); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := waitForLock(ctx, f, wait); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l, err := openOSFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// waitForLock tries the exclusive lock on f until it is free, wait has passed or ctx ends.
func waitForLock(ctx context.Context, f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		locked, err := tryLock(f)
		if err != nil {
			return fmt.Errorf("locking for an in-place edit: %w", err)
		}
		if locked {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w (waited %s)", ErrLocked, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(lockPoll, time.Until(deadline))):
		}
	}
}
