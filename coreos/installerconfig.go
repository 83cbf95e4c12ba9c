package coreos

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sno-iso/sno-iso/internal/suggest"
	"gopkg.in/yaml.v3"
)

// coreos-installer's install config file (`coreos-installer install --config-file`, and
// customize's --installer-config): a YAML mapping whose keys are the long option names of
// `coreos-installer install`, strings for options given once, lists of strings for repeatable
// ones, booleans for flags. sno-iso's install-to-disk runs coreos-installer with the settings
// it controls; the others are refused with what to do instead.

// InstallerConfig is what an install config file sets that install-to-disk honours.
type InstallerConfig struct {
	// DestDevice is dest-device, "" when not set.
	DestDevice string
	// AppendKargs, DeleteKargs and Consoles are append-karg, delete-karg and console.
	AppendKargs, DeleteKargs, Consoles []string
	// CopyNetwork is copy-network, nil when not set.
	CopyNetwork *bool
}

// installerKeyKind is how a key's value is written.
type installerKeyKind int

const (
	installerScalar installerKeyKind = iota
	installerList
	installerFlag
)

// installerKey is a key of coreos-installer's install config.
type installerKey struct {
	name        string
	kind        installerKeyKind
	alternative string // what to do instead; "" for a key sno-iso honours
}

// installerKeys are the keys of coreos-installer's install config.
var installerKeys = []installerKey{
	{"dest-device", installerScalar, ""},
	{"append-karg", installerList, ""},
	{"delete-karg", installerList, ""},
	{"console", installerList, ""},
	{"copy-network", installerFlag, ""},
	{"ignition-file", installerScalar, ignitionKeyAlternative},
	{"ignition-url", installerScalar, ignitionKeyAlternative},
	{"ignition-hash", installerScalar, ignitionKeyAlternative},
	{"stream", installerScalar, imageKeyAlternative},
	{"image-url", installerScalar, imageKeyAlternative},
	{"image-file", installerScalar, imageKeyAlternative},
	{"stream-base-url", installerScalar, imageKeyAlternative},
	{"offline", installerFlag, imageKeyAlternative},
	{"insecure", installerFlag, imageKeyAlternative},
	{"architecture", installerScalar, "the install writes the live system's own image: use a live ISO of that architecture"},
	{"platform", installerScalar, "bootstrap-in-place installs the platform its live system boots (metal): leave it out"},
	{"network-dir", installerScalar, "install-to-disk copies the live system's keyfiles from their default directory: " +
		"give the keyfiles as network keyfiles of the node"},
	{"insecure-ignition", installerFlag, ignitionKeyAlternative},
	{"save-partlabel", installerList, partitionKeyAlternative},
	{"save-partindex", installerList, partitionKeyAlternative},
	{"preserve-on-error", installerFlag, "install-to-disk does not offer it: leave it out"},
	{"fetch-retries", installerScalar, "the install fetches nothing (it writes the live system's own image): leave it out"},
	{"secure-ipl", installerFlag, "install-to-disk does not offer IBM Secure IPL: leave it out"},
}

const (
	ignitionKeyAlternative = "the installed node boots the master Ignition config that bootkube renders: " +
		"give Ignition fragments for it as customizations of the installed node"
	imageKeyAlternative = "the install writes the live system's own image, offline: " +
		"leave it out and start from a live ISO of the release to install"
	partitionKeyAlternative = "install-to-disk does not keep partitions: leave it out, " +
		"or put the data on another disk"
)

// UnknownInstallerKeyError says that an install config file has a key coreos-installer's
// install does not know.
type UnknownInstallerKeyError struct {
	Source, Key string
	// Suggestion is the known key nearest Key, "" when none is near.
	Suggestion string
}

func (e *UnknownInstallerKeyError) Error() string {
	msg := fmt.Sprintf("%s: unknown key %q: coreos-installer install has no option --%s", e.Source, e.Key, e.Key)
	if e.Suggestion != "" {
		msg += fmt.Sprintf(`; did you mean %q?`, e.Suggestion)
	}
	return msg
}

// UnsupportedInstallerKeyError says that an install config file sets a key sno-iso's
// install-to-disk does not honour; Alternative says what to do instead.
type UnsupportedInstallerKeyError struct {
	Source, Key, Alternative string
}

func (e *UnsupportedInstallerKeyError) Error() string {
	return fmt.Sprintf("%s: %s is not honoured by sno-iso's install-to-disk: %s", e.Source, e.Key, e.Alternative)
}

// ParseInstallerConfig reads one install config file; source names it in errors. An empty
// file sets nothing.
func ParseInstallerConfig(source string, data []byte) (*InstallerConfig, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not YAML: %v", source, err)
	}
	cfg := &InstallerConfig{}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: an install config is a mapping of option names to values", source, root.Line)
	}
	names := make([]string, len(installerKeys))
	for i, k := range installerKeys {
		names[i] = k.name
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keyNode, value := root.Content[i], root.Content[i+1]
		key := keyNode.Value
		j := slices.IndexFunc(installerKeys, func(k installerKey) bool { return k.name == key })
		if keyNode.Kind != yaml.ScalarNode || j < 0 {
			return nil, &UnknownInstallerKeyError{Source: source, Key: key, Suggestion: suggest.Nearest(key, names)}
		}
		if seen[key] {
			return nil, fmt.Errorf("%s: line %d: %s is given twice", source, keyNode.Line, key)
		}
		seen[key] = true
		k := installerKeys[j]
		if k.alternative != "" {
			return nil, &UnsupportedInstallerKeyError{Source: source, Key: key, Alternative: k.alternative}
		}
		where := fmt.Sprintf("%s: line %d: %s", source, value.Line, key)
		switch k.kind {
		case installerScalar: // dest-device, the one string sno-iso honours
			if value.Kind != yaml.ScalarNode || value.Tag != "!!str" {
				return nil, fmt.Errorf("%s: want a string", where)
			}
			cfg.DestDevice = value.Value
		case installerFlag: // copy-network, the one flag sno-iso honours
			var b bool
			if value.Kind != yaml.ScalarNode || value.Tag != "!!bool" || value.Decode(&b) != nil {
				return nil, fmt.Errorf("%s: want true or false", where)
			}
			cfg.CopyNetwork = &b
		case installerList:
			list, err := stringSequence(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			switch key {
			case "append-karg":
				cfg.AppendKargs = list
			case "delete-karg":
				cfg.DeleteKargs = list
			case "console":
				for _, spec := range list {
					// The device comes first (ttyS0,115200n8): YAML's flow syntax splits an
					// unquoted [ttyS0,115200n8] into a console and a bare speed.
					if spec == "" || spec[0] < 'a' || spec[0] > 'z' {
						return nil, fmt.Errorf("%s: %q is not a console (DEVICE[,OPTIONS]); quote each entry: [\"ttyS0,115200n8\"]", where, spec)
					}
				}
				cfg.Consoles = list
			}
		}
	}
	return cfg, nil
}

// stringSequence is a YAML sequence of strings.
func stringSequence(n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("want a list of strings (one entry per option)")
	}
	list := []string{}
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
			return nil, fmt.Errorf("line %d: want a string; quote it", item.Line)
		}
		list = append(list, item.Value)
	}
	return list, nil
}

// Then returns the settings of c followed by those of later, as coreos-installer reads its
// config files in order: a later file's scalar replaces an earlier one's, lists append.
func (c InstallerConfig) Then(later *InstallerConfig) InstallerConfig {
	out := InstallerConfig{
		DestDevice:  c.DestDevice,
		AppendKargs: append(slices.Clip(c.AppendKargs), later.AppendKargs...),
		DeleteKargs: append(slices.Clip(c.DeleteKargs), later.DeleteKargs...),
		Consoles:    append(slices.Clip(c.Consoles), later.Consoles...),
		CopyNetwork: c.CopyNetwork,
	}
	if later.DestDevice != "" {
		out.DestDevice = later.DestDevice
	}
	if later.CopyNetwork != nil {
		out.CopyNetwork = later.CopyNetwork
	}
	return out
}
