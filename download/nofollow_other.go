//go:build !unix

package download

// oNoFollow is not an open flag here; openNoFollow checks with Lstat instead.
const oNoFollow = 0
