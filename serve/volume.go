package serve

import (
	"os"
	"path/filepath"
)

// dataLink is the symbolic link through which a Kubernetes Secret or ConfigMap volume (the
// kubelet's atomic writer) names the current version of its files: NODE/..data ->
// ..2026_12_01_08_00_00.123, with NODE/sno.yaml -> ..data/sno.yaml. An update writes a new
// version directory, swaps the link and removes the old directory.
const dataLink = "..data"

// maxVersionReads bounds how often a preparation starts over because the files were
// updated while it read them.
const maxVersionReads = 3

// nodeVersion is the directory a node's files are read from, one version of them: for a
// Secret or ConfigMap mounted at dir, what dir/..data points to now; for a node directory
// that is itself a link (a projected volume's NODES/NODE -> ..data/NODE), its target;
// otherwise dir. Version directories are never rewritten, so a changed result is the only
// sign of an update needed, and a preparation that reads through it sees one version.
func nodeVersion(dir string) string {
	if v, err := filepath.EvalSymlinks(filepath.Join(dir, dataLink)); err == nil {
		return v
	}
	if info, err := os.Lstat(dir); err == nil && info.Mode()&os.ModeSymlink != 0 {
		if v, err := filepath.EvalSymlinks(dir); err == nil {
			return v
		}
	}
	return dir
}
