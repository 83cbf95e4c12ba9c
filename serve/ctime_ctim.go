//go:build linux || openbsd

package serve

import (
	"syscall"
	"time"
)

func statCtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
