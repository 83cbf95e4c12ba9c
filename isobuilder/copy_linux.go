//go:build linux

package isobuilder

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoKernelCopy means the kernel cannot copy between these two files; the caller copies
// through a buffer instead.
var errNoKernelCopy = errors.New("kernel copy not available")

// kernelCopier moves bytes from a base file to a destination file without passing them through
// user space: copy_file_range where the destination allows it (a regular file, possibly shared
// extents on btrfs/XFS), sendfile otherwise (a pipe, a socket, a device). It reads the base at
// explicit offsets, so the base's file position is never used, and writes at the destination's
// current position, like a Write.
type kernelCopier struct {
	dst, src    syscall.RawConn
	useSendfile bool // copy_file_range was refused for this pair
}

// newKernelCopier returns nil when dst or src is not an *os.File.
func newKernelCopier(dst io.Writer, src io.ReaderAt) *kernelCopier {
	dstFile, ok := dst.(*os.File)
	if !ok {
		return nil
	}
	srcFile, ok := src.(*os.File)
	if !ok {
		return nil
	}
	dstConn, err := dstFile.SyscallConn()
	if err != nil {
		return nil
	}
	srcConn, err := srcFile.SyscallConn()
	if err != nil {
		return nil
	}
	return &kernelCopier{dst: dstConn, src: srcConn}
}

// copy moves up to n bytes at off; it copies at least one byte or returns an error, which is
// errNoKernelCopy when the kernel offers no way to copy between these files.
func (k *kernelCopier) copy(off, n int64) (int64, error) {
	if !k.useSendfile {
		copied, err := k.syscall(off, n, func(dst, src int, srcOff *int64, n int) (int, error) {
			return unix.CopyFileRange(src, srcOff, dst, nil, n, 0)
		})
		if !errors.Is(err, errNoKernelCopy) {
			return copied, err
		}
		k.useSendfile = true
	}
	return k.syscall(off, n, unix.Sendfile)
}

// syscall runs one copy system call with the two descriptors, waiting for a non-blocking
// destination to become writable.
func (k *kernelCopier) syscall(off, n int64, copyFn func(dst, src int, srcOff *int64, n int) (int, error)) (int64, error) {
	var copied int
	var errno error
	err := k.src.Control(func(src uintptr) {
		err := k.dst.Write(func(dst uintptr) bool {
			for {
				srcOff := off
				copied, errno = copyFn(int(dst), int(src), &srcOff, int(n))
				if errno != unix.EINTR {
					return errno != unix.EAGAIN
				}
			}
		})
		if err != nil {
			errno = err
		}
	})
	if err != nil {
		return 0, err
	}
	if errno == nil && copied > 0 {
		return int64(copied), nil
	}
	// Nothing copied and no error means the kernel cannot copy these files or the base ends
	// early; the buffered copy tells which.
	if errno == nil || kernelRefused(errno) {
		return 0, errNoKernelCopy
	}
	return 0, errno
}

// kernelRefused reports an error that means "not for these files", not a failed write.
// EPERM is included because container seccomp filters answer unknown system calls with it.
func kernelRefused(err error) bool {
	switch err {
	case unix.EXDEV, unix.ENOSYS, unix.EINVAL, unix.EOPNOTSUPP, unix.EBADF, unix.EPERM:
		return true
	}
	return false
}
