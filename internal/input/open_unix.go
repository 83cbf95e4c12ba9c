//go:build unix

package input

import "syscall"

// openNonBlocking keeps open(2) from waiting for a named pipe's writer.
const openNonBlocking = syscall.O_NONBLOCK
