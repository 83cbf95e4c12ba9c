package capability

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// nodeName is what a node directory may be called to be published: short, URL-safe without
// escaping, and unable to name anything outside the nodes directory. Names ending in
// MinimalSuffix would make /<name>.iso ambiguous.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ValidNodeName reports whether a node directory called name is published.
func ValidNodeName(name string) bool {
	return nodeName.MatchString(name) && !strings.HasSuffix(name, MinimalSuffix)
}

// ListNodes reads the nodes directory dir: the nodes it publishes, sorted, and the entries
// that look like nodes but are not published, each with the reason. Dot files (the secret)
// and files are not nodes; symbolic links are followed, as the directory's owner put them
// there.
func ListNodes(dir string) (nodes, skipped []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err != nil || !info.IsDir():
			continue
		case !ValidNodeName(name):
			skipped = append(skipped, fmt.Sprintf("%s: not served; node names are 1 to 63 letters, digits, '.', '_' or '-', "+
				"starting with a letter or digit, not ending in %s", name, MinimalSuffix))
		default:
			nodes = append(nodes, name)
		}
	}
	slices.Sort(nodes)
	return nodes, skipped, nil
}

// NodeNames lists the nodes a server over dir publishes, sorted.
func NodeNames(dir string) ([]string, error) {
	nodes, _, err := ListNodes(dir)
	return nodes, err
}
