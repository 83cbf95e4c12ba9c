//go:build linux || darwin || freebsd || netbsd || openbsd

package filestamp

import (
	"io/fs"
	"syscall"
	"time"
)

// ChangeTime is the file's status change time (ctime): unlike the modification time, no
// program can set it back, so a write whose mtime was restored afterwards (rsync --inplace
// --times, touch -r) still shows.
func ChangeTime(info fs.FileInfo) (time.Time, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return statCtime(st), true
}
