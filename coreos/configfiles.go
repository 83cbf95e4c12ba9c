package coreos

import (
	"fmt"
	"slices"
)

// NamedFile is a file a config names, and the key that names it.
type NamedFile struct {
	Key  string // such as network.keyfiles[0]; "" for a path no listed key names
	Path string // resolved with ResolvePath
}

// Files lists every file the config names: the network keyfiles and NMState documents, the
// customizations, the BMC credentials and CA files, then any other path the parser resolved,
// so that a rule about the files a config may name (such as a nodes directory's closed world)
// sees every one.
func (c *Config) Files() []NamedFile {
	var files []NamedFile
	for i, p := range c.NetworkKeyfiles {
		files = append(files, NamedFile{fmt.Sprintf("%s.keyfiles[%d]", networkKey, i), p})
	}
	for i, p := range c.NetworkNMState {
		files = append(files, NamedFile{fmt.Sprintf("%s.nmstate[%d]", networkKey, i), p})
	}
	for i, p := range c.Customizations {
		files = append(files, NamedFile{fmt.Sprintf("%s[%d]", customizationsKey, i), p})
	}
	if c.BMC != nil && c.BMC.CredentialsFile != "" {
		files = append(files, NamedFile{bmcKey + ".credentialsFile", c.BMC.CredentialsFile})
	}
	if c.BMC != nil && c.BMC.CAFile != "" {
		files = append(files, NamedFile{bmcKey + ".caFile", c.BMC.CAFile})
	}
	for _, p := range c.resolved {
		if !slices.ContainsFunc(files, func(f NamedFile) bool { return f.Path == p }) {
			files = append(files, NamedFile{Path: p})
		}
	}
	return files
}
