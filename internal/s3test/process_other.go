//go:build !unix

package s3test

import "os/exec"

// ownProcessGroup does nothing where there are no process groups: weed is one process.
func ownProcessGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
