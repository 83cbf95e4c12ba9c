//go:build linux || openbsd

package filestamp

import (
	"syscall"
	"time"
)

func statCtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
