package initrd

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Files is an archive's content: path (relative, no leading "/" or "./") -> bytes.
type Files map[string][]byte

// Paths returns the paths of files sorted byte-wise.
func (f Files) Paths() []string {
	paths := make([]string, 0, len(f))
	for p := range f {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// IgnitionPath is where the live initramfs looks for the Ignition config.
const IgnitionPath = "config.ign"

// MaxIgnitionSize bounds an Ignition config read into memory; real ones are well under 2 MiB.
const MaxIgnitionSize = 16 << 20

// NetworkDir holds NetworkManager keyfiles for the first boot; each keyfile lives at
// NetworkDir + "/" + its basename.
const NetworkDir = "etc/coreos-firstboot-network"

// IsNetworkFile reports whether path lies under NetworkDir, at any depth: coreos-installer
// selects these files with the glob "etc/coreos-firstboot-network/*", whose '*' also matches '/'.
func IsNetworkFile(path string) bool {
	return strings.HasPrefix(path, NetworkDir+"/")
}

// checkArchivePath rejects paths that WriteNewc cannot store as a relative, canonical name.
func checkArchivePath(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("initrd: archive path %q names no file", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("initrd: archive path %q is absolute; paths must be relative", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("initrd: archive path %q contains a NUL byte", p)
	case hasDotDot(p):
		return fmt.Errorf("initrd: archive path %q contains path traversal", p)
	case path.Clean(p) != p:
		return fmt.Errorf("initrd: archive path %q is not clean (want %q)", p, path.Clean(p))
	}
	return nil
}

// hasDotDot reports whether any slash-separated component of p is "..".
func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}
