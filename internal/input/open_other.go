//go:build !unix

package input

// openNonBlocking is no flag where opening a file never waits for another process.
const openNonBlocking = 0
