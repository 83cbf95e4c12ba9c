//go:build unix

package progress

import "syscall"

// oNoFollow makes an open fail on a symbolic link in place of the file.
const oNoFollow = syscall.O_NOFOLLOW
