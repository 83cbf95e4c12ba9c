//go:build unix

package s3test

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own, so that killGroup ends whatever
// it starts too.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
