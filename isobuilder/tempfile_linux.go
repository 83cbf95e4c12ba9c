//go:build linux

package isobuilder

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new file in dir that has no name (O_TMPFILE) until linkUnnamed gives
// it one: a crash leaves nothing. Filesystems without O_TMPFILE (some FUSE and NFS) refuse
// with EOPNOTSUPP, EISDIR or EINVAL: the error is then errNoUnnamed.
func openUnnamed(dir *outDir, perm os.FileMode) (*os.File, error) {
	var fd int
	err := withDirFD(dir, func(dirfd int) (err error) {
		for {
			fd, err = unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
			if err != unix.EINTR {
				return err
			}
		}
	})
	switch err {
	case nil:
		return os.NewFile(uintptr(fd), dir.join("(unnamed temporary file)")), nil
	case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL:
		return nil, errNoUnnamed
	}
	return nil, &os.PathError{Op: "open", Path: dir.path, Err: err}
}

// linkUnnamed gives the unnamed file f the name name in dir, failing when name exists (the
// error then wraps fs.ErrExist).
func linkUnnamed(dir *outDir, f *os.File, name string) error {
	err := withDirFD(dir, func(dirfd int) error {
		// The /proc link needs no privilege; AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on
		// older kernels but no /proc.
		err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), dirfd, name, unix.AT_SYMLINK_FOLLOW)
		if err == unix.ENOENT {
			err = unix.Linkat(int(f.Fd()), "", dirfd, name, unix.AT_EMPTY_PATH)
		}
		return err
	})
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dir.join(name), Err: err}
	}
	return nil
}

// renameNoReplace renames oldname to newname in dir unless newname exists (the error then
// wraps fs.ErrExist). It falls back to link-then-unlink on filesystems without
// RENAME_NOREPLACE.
func renameNoReplace(dir *outDir, oldname, newname string) error {
	err := withDirFD(dir, func(dirfd int) error {
		return unix.Renameat2(dirfd, oldname, dirfd, newname, unix.RENAME_NOREPLACE)
	})
	switch err {
	case nil:
		return nil
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return linkThenUnlink(dir, oldname, newname)
	}
	return &os.LinkError{Op: "rename", Old: dir.join(oldname), New: dir.join(newname), Err: err}
}

// withDirFD calls fn with a descriptor of dir.
func withDirFD(dir *outDir, fn func(dirfd int) error) error {
	d, err := dir.root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(int(d.Fd()))
}
