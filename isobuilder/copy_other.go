//go:build !linux

package isobuilder

import (
	"errors"
	"io"
)

// errNoKernelCopy means the kernel cannot copy between these two files; the caller copies
// through a buffer instead.
var errNoKernelCopy = errors.New("kernel copy not available")

// kernelCopier is never created outside Linux: every copy goes through a buffer.
type kernelCopier struct{}

func newKernelCopier(io.Writer, io.ReaderAt) *kernelCopier { return nil }

func (*kernelCopier) copy(off, n int64) (int64, error) { return 0, errNoKernelCopy }
