package progress

import (
	"fmt"
	"strings"
)

// Phase is one step of a node's install, as the node reports it.
type Phase string

// The phases, in the order an install goes through them; Failed can come at any point.
const (
	LiveBooted      Phase = "live-booted"      // the live system is up and reaches the server
	BootkubeStarted Phase = "bootkube-started" // bootkube.service started (again, after a restart)
	BootkubeDone    Phase = "bootkube-done"    // bootkube.service ended well: the control plane is rendered
	InstallStarted  Phase = "install-started"  // install-to-disk.sh starts coreos-installer
	InstallDone     Phase = "install-done"     // coreos-installer wrote the disk; the reboot delay begins
	Rebooting       Phase = "rebooting"        // the live system is shutting down to boot the disk
	InstalledBooted Phase = "installed-booted" // the installed system booted from the disk
	Failed          Phase = "failed"           // a unit failed: the report names it, its exit status and its journal
)

// Phases lists every phase in install order, Failed last.
var Phases = []Phase{LiveBooted, BootkubeStarted, BootkubeDone, InstallStarted, InstallDone, Rebooting, InstalledBooted, Failed}

// WaitPhases are the phases worth waiting for: each marks a stage a user acts on.
var WaitPhases = []Phase{LiveBooted, BootkubeDone, InstallDone, InstalledBooted}

// ParsePhase returns the phase named s, or an error listing the phases.
func ParsePhase(s string) (Phase, error) {
	for _, p := range Phases {
		if string(p) == s {
			return p, nil
		}
	}
	return "", &UnknownPhaseError{Name: s}
}

// UnknownPhaseError is a phase name that is not one of Phases.
type UnknownPhaseError struct{ Name string }

func (e *UnknownPhaseError) Error() string {
	names := make([]string, len(Phases))
	for i, p := range Phases {
		names[i] = string(p)
	}
	return fmt.Sprintf("unknown phase %q: the phases are %s", truncate(e.Name, 64), strings.Join(names, ", "))
}

// rank orders the phases of a successful install; Failed has none.
func (p Phase) rank() int {
	for i, q := range Phases[:len(Phases)-1] {
		if q == p {
			return i
		}
	}
	return -1
}

// Reaches reports whether a node that reported p has got at least as far as target: a node
// that booted its disk has also written it.
func (p Phase) Reaches(target Phase) bool {
	return p != Failed && target != Failed && p.rank() >= target.rank()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
