package coreos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/internal/suggest"
	"github.com/sno-iso/sno-iso/nmstate"
	"gopkg.in/yaml.v3"
)

// MaxConfigFileSize bounds sno.yaml and install-config.yaml, which are a few KiB (an
// install-config with a large trust bundle stays well under a MiB).
const MaxConfigFileSize = 4 << 20

// ConfigFileKind names what such a file should be, in errors.
const ConfigFileKind = "a configuration file"

// Config is a parsed sno.yaml.
type Config struct {
	// Path is the file as the user named it, for messages.
	Path string
	// Dir is the absolute directory of the file: paths written in the file are relative
	// to it (see ResolvePath), whatever the working directory.
	Dir string
	// Installation is the coreOSInstallation (or bootstrapInPlace) section.
	Installation Installation
	// CopyNetworkSet reports whether the file sets copyNetwork: an explicit false wins over
	// the --copy-network that network keyfiles otherwise imply.
	CopyNetworkSet bool
	// LiveKargs edits the kernel arguments the live ISO boots with (`liveKargs`).
	LiveKargs LiveKargs
	// NetworkKeyfiles are NetworkManager keyfiles for the live system (`network.keyfiles`),
	// resolved with ResolvePath.
	NetworkKeyfiles []string
	// NetworkNMState are NMState documents for the live system (`network.nmstate`),
	// resolved with ResolvePath.
	NetworkNMState []string
	// NetworkConfig is the inline NMState document (`networkConfig`, agent-config's key),
	// nil when there is none.
	NetworkConfig *nmstate.Document
	// NICs map NMState interface names to MAC addresses (`interfaces`, as agent-config's
	// hosts have): the profiles of those interfaces match their NIC by MAC.
	NICs []nmstate.NIC
	// Hostname is the node's name (`hostname`), written to /etc/hostname of the live and
	// the installed system; "" when the file gives none.
	Hostname string
	// Customizations are Ignition configs and MachineConfigs for the installed node
	// (`customizations`), resolved with ResolvePath.
	Customizations []string
	// Output is the kind of media to make (`output`).
	Output Output
	// BMC is the node's BMC (`bmc`), nil when the file has none.
	BMC *BMC
	// resolved are the paths ResolvePath made: every file the config names (Files).
	resolved []string
}

// Output says which media build makes: the full ISO (Kind "" or "full") or a minimal ISO
// that fetches its root file system from RootfsURL.
type Output struct {
	Kind      string
	RootfsURL string
}

// LiveKargs are edits of the live kernel command line, applied as coreos-installer applies
// them: deletes, then appends, then replaces (`KEY=OLD=NEW`).
type LiveKargs struct {
	Append, Delete, Replace []string
}

// IsZero reports whether there is no edit.
func (k LiveKargs) IsZero() bool {
	return len(k.Append)+len(k.Delete)+len(k.Replace) == 0
}

// ResolvePath returns a path written in the file as a path usable from anywhere:
// absolute paths as they are, relative ones joined to the file's directory. The parser
// resolves every file the config names through it, so Files lists them all.
func (c *Config) ResolvePath(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	p = filepath.Clean(p)
	c.resolved = append(c.resolved, p)
	return p
}

// sno.yaml keys. The installation section has the sno-iso name and the install-config one.
const (
	installationKey      = "coreOSInstallation"
	installConfigSection = "bootstrapInPlace"
	liveKargsKey         = "liveKargs"
	networkKey           = "network"
	customizationsKey    = "customizations"
	outputKey            = "output"
	bmcKey               = "bmc"
	networkConfigKey     = "networkConfig"
	interfacesKey        = "interfaces"
	hostnameKey          = "hostname"
)

var (
	topLevelKeys = []string{installationKey, installConfigSection, liveKargsKey, networkKey, customizationsKey, outputKey, bmcKey,
		networkConfigKey, interfacesKey, hostnameKey}
	// plannedKeys are reserved for features of later releases: rejected, but with a
	// message that says so rather than "unknown".
	plannedKeys      = []string{}
	liveKargsKeys    = []string{"append", "delete", "replace"}
	outputKeys       = []string{"kind", "rootfsURL"}
	networkKeys      = []string{"keyfiles", "nmstate"}
	installationKeys = []string{"installationDisk", "copyNetwork", "appendKargs", "deleteKargs", "wipeDisk", "rebootDelay"}
)

// LoadConfig reads an sno.yaml file.
func LoadConfig(path string) (*Config, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data)
}

func readConfigFile(path string) ([]byte, error) {
	return input.ReadFile(path, MaxConfigFileSize, ConfigFileKind)
}

// ParseConfig parses the contents of an sno.yaml; name is the file's path, used for
// messages and to resolve relative paths. Unknown or repeated keys are errors that give
// the key's line.
func ParseConfig(name string, data []byte) (*Config, error) {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, err
	}
	cfg := &Config{Path: name, Dir: dir}
	p := configParser{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is empty: it needs a %s section with installationDisk", name, installationKey)
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, p.errorf(&extra, "a second YAML document: sno.yaml holds one")
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s is empty: it needs a %s section with installationDisk", name, installationKey)
	}
	top := doc.Content[0]
	if err := p.walkMapping(top, "", topLevelKeys, func(key string, value *yaml.Node) error {
		switch key {
		case liveKargsKey:
			return p.liveKargs(value, &cfg.LiveKargs)
		case networkKey:
			return p.network(value, cfg)
		case customizationsKey:
			return p.customizations(value, cfg)
		case outputKey:
			return p.output(value, &cfg.Output)
		case bmcKey:
			return p.bmc(value, cfg)
		case networkConfigKey:
			cfg.NetworkConfig, err = nmstate.ParseNode(name, networkConfigKey, value)
			return err
		case interfacesKey:
			cfg.NICs, err = nmstate.ParseNICs(name, interfacesKey, value)
			return err
		case hostnameKey:
			return p.hostname(value, cfg)
		}
		if p.sectionSeen {
			return p.errorf(value, "both %s and %s are set: keep one", installationKey, installConfigSection)
		}
		p.sectionSeen = true
		return p.installation(value, key, &cfg.Installation)
	}); err != nil {
		return nil, err
	}
	if !p.sectionSeen {
		return nil, fmt.Errorf("%s: no %s section (or %s, its install-config name)", name, installationKey, installConfigSection)
	}
	if cfg.NetworkConfig != nil {
		if err := cfg.NetworkConfig.BindMACs(cfg.NICs); err != nil {
			return nil, err
		}
	}
	cfg.CopyNetworkSet = p.copyNetworkSet
	return cfg, nil
}

type configParser struct {
	name           string
	sectionSeen    bool
	copyNetworkSet bool
}

func (p *configParser) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", p.name, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// walkMapping calls set for each key of a mapping, in order, after checking that the key
// is known and not repeated. where names the enclosing section for messages.
func (p *configParser) walkMapping(n *yaml.Node, where string, known []string, set func(key string, value *yaml.Node) error) error {
	if n.Kind == yaml.AliasNode {
		return p.errorf(n, "YAML aliases are not supported here")
	}
	if n.Kind != yaml.MappingNode {
		if where == "" {
			return p.errorf(n, "expected a mapping of settings such as %s:", installationKey)
		}
		return p.errorf(n, "%s must be a mapping of settings", where)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		name := key.Value
		in := ""
		if where != "" {
			in = " in " + where
		}
		switch {
		case key.Kind != yaml.ScalarNode:
			return p.errorf(key, "a key%s is not a plain name", in)
		case seen[name]:
			return p.errorf(key, "key %q is repeated%s", name, in)
		case contains(known, name):
		case where == "" && contains(plannedKeys, name):
			return p.errorf(key, "key %q is not supported by this version of sno-iso", name)
		default:
			msg := fmt.Sprintf("unknown key %q%s", name, in)
			if s := suggest.Nearest(name, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return p.errorf(key, "%s", msg)
		}
		seen[name] = true
		if value.Kind == yaml.AliasNode {
			return p.errorf(value, "YAML aliases are not supported here")
		}
		if err := set(name, value); err != nil {
			return err
		}
	}
	return nil
}

func (p *configParser) installation(n *yaml.Node, section string, inst *Installation) error {
	return p.walkMapping(n, section, installationKeys, func(key string, v *yaml.Node) error {
		if v.Tag == "!!null" {
			return nil
		}
		var err error
		switch key {
		case "installationDisk":
			if inst.Disk, err = p.str(v, key); err == nil {
				if _, diskErr := ValidateDisk(inst.Disk); diskErr != nil {
					err = p.errorf(v, "%s: %v", key, diskErr)
				}
			}
		case "copyNetwork":
			inst.CopyNetwork, err = p.boolean(v, key)
			p.copyNetworkSet = true
		case "wipeDisk":
			inst.WipeDisk, err = p.boolean(v, key)
		case "appendKargs":
			inst.AppendKargs, err = p.kargs(v, key)
		case "deleteKargs":
			inst.DeleteKargs, err = p.kargs(v, key)
		case "rebootDelay":
			var delay time.Duration
			if delay, err = p.duration(v, key); err == nil {
				inst.RebootDelay = &delay
			}
		}
		return err
	})
}

func (p *configParser) output(n *yaml.Node, o *Output) error {
	err := p.walkMapping(n, outputKey, outputKeys, func(key string, v *yaml.Node) error {
		if v.Tag == "!!null" {
			return nil
		}
		var err error
		switch key {
		case "kind":
			if o.Kind, err = p.str(v, outputKey+".kind"); err == nil && o.Kind != "full" && o.Kind != "minimal" {
				err = p.errorf(v, "%s.kind is %q: use full or minimal", outputKey, o.Kind)
			}
		case "rootfsURL":
			if o.RootfsURL, err = p.str(v, outputKey+".rootfsURL"); err == nil {
				if urlErr := ValidateRootfsURL(o.RootfsURL); urlErr != nil {
					err = p.errorf(v, "%s.rootfsURL: %v", outputKey, urlErr)
				}
			}
		}
		return err
	})
	if err == nil && o.RootfsURL != "" && o.Kind != "minimal" {
		return p.errorf(n, "%s.rootfsURL is only for kind: minimal", outputKey)
	}
	return err
}

func (p *configParser) liveKargs(n *yaml.Node, k *LiveKargs) error {
	return p.walkMapping(n, liveKargsKey, liveKargsKeys, func(key string, v *yaml.Node) error {
		if v.Tag == "!!null" {
			return nil
		}
		var err error
		switch key {
		case "append":
			k.Append, err = p.kargs(v, liveKargsKey+"."+key)
		case "delete":
			k.Delete, err = p.kargs(v, liveKargsKey+"."+key)
		case "replace":
			if k.Replace, err = p.kargs(v, liveKargsKey+"."+key); err == nil {
				for i, r := range k.Replace {
					if err := validateKargReplace(r); err != nil {
						return p.errorf(v.Content[i], "%s.replace[%d] %q: %v", liveKargsKey, i, r, err)
					}
				}
			}
		}
		return err
	})
}

// validateKargReplace accepts KEY=OLD=NEW, the form coreos-installer's --live-karg-replace
// takes: exactly two '=' and three non-empty parts.
func validateKargReplace(r string) error {
	parts := strings.Split(r, "=")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return fmt.Errorf("format should be KEY=OLD=NEW, e.g. ignition.platform.id=metal=openstack")
	}
	return nil
}

func (p *configParser) network(n *yaml.Node, cfg *Config) error {
	return p.walkMapping(n, networkKey, networkKeys, func(key string, v *yaml.Node) error {
		if v.Tag == "!!null" {
			return nil
		}
		what, kind, list := "keyfile", "NetworkManager keyfile", &cfg.NetworkKeyfiles
		if key == "nmstate" {
			what, kind, list = "NMState document", "NMState document", &cfg.NetworkNMState
		}
		if v.Kind != yaml.SequenceNode {
			return p.errorf(v, "%s.%s must be a list of %s paths", networkKey, key, kind)
		}
		for i, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" || item.Value == "" {
				return p.errorf(item, "%s.%s[%d] must be the path of a %s (relative to %s)", networkKey, key, i, what, p.name)
			}
			*list = append(*list, cfg.ResolvePath(item.Value))
		}
		return nil
	})
}

func (p *configParser) customizations(n *yaml.Node, cfg *Config) error {
	if n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.errorf(n, "%s must be a list of Ignition config or MachineConfig paths", customizationsKey)
	}
	for i, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag != "!!str" || item.Value == "" {
			return p.errorf(item, "%s[%d] must be the path of an Ignition config or a MachineConfig (relative to %s)", customizationsKey, i, p.name)
		}
		cfg.Customizations = append(cfg.Customizations, cfg.ResolvePath(item.Value))
	}
	return nil
}

func (p *configParser) hostname(n *yaml.Node, cfg *Config) error {
	name, err := p.str(n, hostnameKey)
	if err != nil {
		return err
	}
	if err := ValidateHostname(name); err != nil {
		return fmt.Errorf("%s:%d:%d: %s: %w", p.name, n.Line, n.Column, hostnameKey, err)
	}
	cfg.Hostname = name
	return nil
}

func (p *configParser) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", p.errorf(n, "%s must be a string", key)
	}
	return n.Value, nil
}

func (p *configParser) boolean(n *yaml.Node, key string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		return false, p.errorf(n, "%s must be true or false, not %q", key, n.Value)
	}
	return b, nil
}

func (p *configParser) kargs(n *yaml.Node, key string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n, "%s must be a list of kernel arguments, one per entry", key)
	}
	kargs := []string{}
	for i, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
			return nil, p.errorf(item, "%s[%d] must be a kernel argument", key, i)
		}
		if err := validateKarg(item.Value); err != nil {
			return nil, p.errorf(item, "%s[%d] %q: %v", key, i, item.Value, err)
		}
		if i > 0 && n.Style&yaml.FlowStyle != 0 && looksSplit(kargs[i-1], item.Value) {
			// Both halves are valid arguments, so the media would boot with the wrong ones.
			whole := kargs[i-1] + "," + item.Value
			return nil, p.errorf(item, "%s[%d] %q looks like the end of %q, which the YAML flow list split at its comma into two "+
				"kernel arguments; quote it to keep it one: %s: [%q] (or write one argument per line if you meant two)",
				key, i, item.Value, whole, key[strings.LastIndex(key, ".")+1:], whole)
		}
		kargs = append(kargs, item.Value)
	}
	return kargs, nil
}

// serialOptions matches the speed, parity, bits and flow control that follow the comma of a
// serial console argument: 115200n8, 9600, 115200n8r.
var serialOptions = regexp.MustCompile(`^[0-9]+(?:[noe][5-8]?r?)?$`)

// looksSplit reports whether karg is the end of the argument before it, cut at a comma: a
// flow list ([console=ttyS0,115200n8]) reads a comma as the end of an item. Only serial
// options count: a flag after a console ([console=tty0, quiet]) is an argument of its own.
func looksSplit(before, karg string) bool {
	return strings.Contains(before, "=") && serialOptions.MatchString(karg)
}

func (p *configParser) duration(n *yaml.Node, key string) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, p.errorf(n, "%s must be a duration such as 1m", key)
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, p.errorf(n, "%s %q is not a duration: write a number with a unit, such as 1m or 5m", key, n.Value)
	}
	if err := ValidateRebootDelay(d); err != nil {
		return 0, p.errorf(n, "%s %v", key, err)
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
