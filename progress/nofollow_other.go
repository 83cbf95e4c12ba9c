//go:build !unix

package progress

// oNoFollow is not an open flag here: readNoFollow refuses a link with Lstat before opening.
const oNoFollow = 0
