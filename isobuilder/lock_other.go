//go:build !unix

package isobuilder

import "os"

// tryLock has no advisory lock to take on this platform: in-place edits of one ISO are not
// serialized here, so run them one at a time.
func tryLock(*os.File) (bool, error) { return true, nil }

// tryLockShared has no lock to take either.
func tryLockShared(*os.File) (bool, error) { return true, nil }

// locksShowOwner says that a lock tells nothing here about a temporary's maker.
const locksShowOwner = false
