package node

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/nmstate"
	"github.com/sno-iso/sno-iso/progress"
)

// maxKeyfileSize bounds a NetworkManager keyfile; real ones are well under 4 KiB.
const maxKeyfileSize = 1 << 20

// Inputs names what describes one node's boot media: the bootstrap-in-place Ignition,
// sno.yaml, install-config.yaml and overrides of their settings.
type Inputs struct {
	IgnitionPath      string
	ConfigPath        string // optional
	InstallConfigPath string // optional
	// Overrides win over sno.yaml and install-config.yaml.
	Overrides        coreos.InstallationFlags
	AllowAnyIgnition bool
	// LiveKargs and NetworkKeyfiles replace sno.yaml's lists when not nil.
	LiveKargs       coreos.LiveKargs
	NetworkKeyfiles []string
	// Customizations replace sno.yaml's list when not nil.
	Customizations []string
	// NetworkNMState are NMState documents, converted to keyfiles; they replace sno.yaml's
	// network.nmstate list when not nil.
	NetworkNMState []string
	// AgentConfigPath is an agent-config.yaml whose host (AgentHost, or its only one) gives
	// the network and, when nothing else does, the installation disk.
	AgentConfigPath string
	AgentHost       string
	// CheckConfig, when set, vets sno.yaml once parsed: an error refuses the node (the nodes
	// directory's rule that a node's files stay inside its directory, nodedir.CheckConfined).
	CheckConfig func(*coreos.Config) error
	// ReadFile, when set, reads every file Load reads, in place of input.ReadFile: the nodes
	// directory's opener that keeps reads inside the node directory (nodedir.ReadFileIn).
	ReadFile func(path string, limit int64, what string) ([]byte, error)
	// ReportURL, when set, makes the node report its install's phases there (see package
	// progress); ReportCA is the PEM certificate that verifies an https one's server.
	ReportURL string
	ReportCA  []byte
	// LiveIgnitions are more Ignition configs for the live system, merged into the
	// bootstrap-in-place config in order; IgnitionCAs are PEM files that Ignition trusts in the
	// live system and on the installed node; PreInstall and PostInstall are scripts the live
	// system runs before and after install-to-disk writes the disk. They are coreos-installer
	// customize's --live-ignition, --ignition-ca, --pre-install and --post-install.
	LiveIgnitions []string
	IgnitionCAs   []string
	PreInstall    []string
	PostInstall   []string
}

// readFunc reads a file of at most limit bytes, what it should be named for errors.
type readFunc func(path string, limit int64, what string) ([]byte, error)

// readFile reads one of the node's files, through in.ReadFile when set.
func (in Inputs) readFile(path string, limit int64, what string) ([]byte, error) {
	if in.ReadFile != nil {
		return in.ReadFile(path, limit, what)
	}
	return input.ReadFile(path, limit, what)
}

// Sources are a node's inputs read into memory, ready for Prepare.
type Sources struct {
	// Ignition is the bootstrap-in-place config, read from IgnitionName.
	Ignition     []byte
	IgnitionName string
	// Config is sno.yaml; an empty Config when there is none.
	Config *coreos.Config
	// Installation merges sno.yaml, install-config.yaml and the overrides.
	Installation coreos.Installation
	// DiskSource is the file that set Installation.Disk (sno.yaml or install-config.yaml),
	// "" when an override set it or nothing did.
	DiskSource string
	// CopyNetworkSet says whether sno.yaml or an override chose copyNetwork explicitly.
	CopyNetworkSet   bool
	AllowAnyIgnition bool
	LiveKargs        coreos.LiveKargs
	// Keyfiles are payload members at initrd.NetworkDir/<name>: the keyfiles given, and
	// those of the NMState documents.
	Keyfiles initrd.Files
	// Hostname is the node's name from sno.yaml or agent-config.yaml, "" when neither gives one.
	Hostname string
	// AgentWarnings are about agent-config.yaml settings that are not applied.
	AgentWarnings []Warning
	// Network are the NMState documents the keyfiles were made from.
	Network        []*nmstate.Document
	Customizations []*coreos.Customization
	// CustomizationWarnings are the customizations' warnings, for the user.
	CustomizationWarnings []string
	// ReportURL and ReportCA are the Inputs'.
	ReportURL string
	ReportCA  []byte
	// LiveFragments, IgnitionCAs, PreInstall and PostInstall are the files of the Inputs'
	// lists, read.
	LiveFragments           []coreos.LiveFragment
	IgnitionCAs             [][]byte
	PreInstall, PostInstall []coreos.InstallScript
}

// Load reads every input of the node. files lists what it read or looked for, also on
// error, so that a caller watching them notices a fixed file.
func (in Inputs) Load() (src *Sources, files []string, err error) {
	files = []string{in.IgnitionPath}
	cfg := &coreos.Config{}
	if in.ConfigPath != "" {
		files = append(files, in.ConfigPath)
		data, err := in.readFile(in.ConfigPath, coreos.MaxConfigFileSize, coreos.ConfigFileKind)
		if err != nil {
			return nil, files, err
		}
		if cfg, err = coreos.ParseConfig(in.ConfigPath, data); err != nil {
			return nil, files, err
		}
		if in.CheckConfig != nil {
			if err := in.CheckConfig(cfg); err != nil {
				return nil, files, err
			}
		}
		// The same rule as when the URL is written into the kernel arguments, checked now so
		// that a node is refused as a whole, not when its minimal ISO is first asked for.
		if url := cfg.Output.RootfsURL; url != "" {
			if err := isobuilder.CheckRootfsURL(url); err != nil {
				return nil, files, fmt.Errorf("%s: output.rootfsURL: %w", in.ConfigPath, err)
			}
		}
	}
	if in.ReportURL != "" {
		if err := progress.CheckURL(in.ReportURL); err != nil {
			return nil, files, err
		}
	}
	src = &Sources{IgnitionName: in.IgnitionPath, Config: cfg, AllowAnyIgnition: in.AllowAnyIgnition,
		ReportURL: in.ReportURL, ReportCA: in.ReportCA, Hostname: cfg.Hostname}
	if in.InstallConfigPath != "" {
		files = append(files, in.InstallConfigPath)
	}
	if src.Installation, src.DiskSource, err = in.installation(cfg); err != nil {
		return nil, files, err
	}
	var agent *nmstate.AgentHost
	if in.AgentConfigPath != "" {
		files = append(files, in.AgentConfigPath)
		if agent, err = in.agentHost(src); err != nil {
			return nil, files, err
		}
	}
	src.CopyNetworkSet = cfg.CopyNetworkSet || in.Overrides.CopyNetwork != nil
	var keyfilePaths []string
	src.LiveKargs, keyfilePaths = in.liveSettings(cfg)
	customizationPaths := cfg.Customizations
	if in.Customizations != nil {
		customizationPaths = in.Customizations
	}
	nmstatePaths := cfg.NetworkNMState
	if in.NetworkNMState != nil {
		nmstatePaths = in.NetworkNMState
	}
	files = append(append(append(files, keyfilePaths...), nmstatePaths...), customizationPaths...)
	var inline []*nmstate.Document
	if cfg.NetworkConfig != nil {
		inline = append(inline, cfg.NetworkConfig)
	}
	if agent != nil && agent.Network != nil {
		inline = append(inline, agent.Network)
	}
	if src.Keyfiles, src.Network, err = networkKeyfiles(in.readFile, keyfilePaths, nmstatePaths, cfg.NICs, inline...); err != nil {
		return nil, files, err
	}
	if src.Customizations, src.CustomizationWarnings, err = loadCustomizations(in.readFile, customizationPaths); err != nil {
		return nil, files, err
	}
	files = append(files, in.LiveIgnitions...)
	files = append(append(append(files, in.IgnitionCAs...), in.PreInstall...), in.PostInstall...)
	if err := in.loadAdditions(src); err != nil {
		return nil, files, err
	}
	if src.Ignition, err = in.readFile(in.IgnitionPath, coreos.MaxIgnitionSize, "an Ignition config"); err != nil {
		return nil, files, err
	}
	return src, files, nil
}

// maxInstallScriptSize bounds a pre- or post-install script, which travels in the live config.
const maxInstallScriptSize = 1 << 20

// maxCABundleSize bounds an Ignition CA bundle.
const maxCABundleSize = 4 << 20

// loadAdditions reads the live configs, CAs and install scripts, each checked and named by
// its file in errors.
func (in Inputs) loadAdditions(src *Sources) error {
	for _, p := range in.LiveIgnitions {
		data, err := in.readFile(p, coreos.MaxIgnitionSize, "an Ignition config")
		if err != nil {
			return err
		}
		ig, _, err := coreos.ParseIgnition(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if ig.IsBootstrapInPlace() {
			return fmt.Errorf("%s: %w", p, coreos.ErrSecondBootstrapInPlace)
		}
		src.LiveFragments = append(src.LiveFragments, coreos.LiveFragment{Source: p, Data: data})
	}
	for _, p := range in.IgnitionCAs {
		data, err := in.readFile(p, maxCABundleSize, "a PEM CA bundle")
		if err != nil {
			return err
		}
		if err := coreos.CheckCABundle(data); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		src.IgnitionCAs = append(src.IgnitionCAs, data)
	}
	for _, list := range []struct {
		kind  string
		paths []string
		into  *[]coreos.InstallScript
	}{{"pre", in.PreInstall, &src.PreInstall}, {"post", in.PostInstall, &src.PostInstall}} {
		byName := map[string]string{}
		for _, p := range list.paths {
			if other, ok := byName[filepath.Base(p)]; ok {
				return fmt.Errorf("the %s-install scripts %s and %s have one name, and the live system keeps them in one directory: "+
					"rename one", list.kind, other, p)
			}
			byName[filepath.Base(p)] = p
			data, err := in.readFile(p, maxInstallScriptSize, "a script")
			if err != nil {
				return err
			}
			*list.into = append(*list.into, coreos.InstallScript{Name: filepath.Base(p), Data: data})
		}
	}
	return nil
}

// liveSettings merges the live kargs and keyfiles of sno.yaml and the overrides: a list
// given as an override replaces the file's.
func (in Inputs) liveSettings(cfg *coreos.Config) (coreos.LiveKargs, []string) {
	kargs, keyfiles := cfg.LiveKargs, cfg.NetworkKeyfiles
	if in.LiveKargs.Append != nil {
		kargs.Append = in.LiveKargs.Append
	}
	if in.LiveKargs.Delete != nil {
		kargs.Delete = in.LiveKargs.Delete
	}
	if in.LiveKargs.Replace != nil {
		kargs.Replace = in.LiveKargs.Replace
	}
	if in.NetworkKeyfiles != nil {
		keyfiles = in.NetworkKeyfiles
	}
	return kargs, keyfiles
}

// installation merges sno.yaml, install-config.yaml and the overrides, in rising precedence,
// and names the file that set the disk ("" for an override).
func (in Inputs) installation(cfg *coreos.Config) (_ coreos.Installation, diskSource string, _ error) {
	inst := cfg.Installation
	if inst.Disk != "" {
		diskSource = in.ConfigPath
	}
	if in.InstallConfigPath != "" {
		fromInstallConfig, err := coreos.LoadInstallConfig(in.InstallConfigPath)
		if err != nil {
			return inst, "", err
		}
		switch {
		case inst.Disk == "":
			inst.Disk, diskSource = fromInstallConfig.Disk, in.InstallConfigPath
		case inst.Disk != fromInstallConfig.Disk:
			return inst, "", fmt.Errorf("%s says installationDisk %s but %s says %s; keep one of "+
				"them", in.ConfigPath, inst.Disk, in.InstallConfigPath, fromInstallConfig.Disk)
		}
	}
	if in.Overrides.Disk != "" {
		diskSource = ""
	}
	return in.Overrides.Override(inst), diskSource, nil
}

// loadCustomizations loads the customization files and checks that they merge: a conflict
// between two of the user's files is about them, not about the bootstrap-in-place config
// they go into.
func loadCustomizations(read readFunc, paths []string) ([]*coreos.Customization, []string, error) {
	var parts []*coreos.Customization
	var warnings []string
	for _, p := range paths {
		// One byte more than allowed lets ParseCustomization say why the file is refused.
		data, err := read(p, coreos.MaxCustomizationSize+1, "a customization")
		if err != nil {
			return nil, nil, err
		}
		c, err := coreos.ParseCustomization(p, data)
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, c)
		for _, w := range c.Warnings() {
			warnings = append(warnings, w.String())
		}
	}
	if _, _, err := coreos.MergeCustomizations(coreos.RoleMaster, parts, ""); err != nil {
		return nil, nil, err
	}
	return parts, warnings, nil
}

// ReadKeyfiles reads NetworkManager keyfiles into payload members, each at
// initrd.NetworkDir/<basename>, where the live initramfs picks them up. Each must be a
// keyfile (a [connection] section), and two inputs may not share a basename.
func ReadKeyfiles(paths []string) (initrd.Files, error) {
	return readKeyfiles(input.ReadFile, paths)
}

func readKeyfiles(read readFunc, paths []string) (initrd.Files, error) {
	files := initrd.Files{}
	for _, p := range paths {
		data, err := readKeyfile(read, p)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(p)
		if err := addKeyfile(files, initrd.NetworkDir+"/"+name, name, p, data); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// DuplicateKeyfileError says that two inputs give keyfiles of one name: the live system keeps
// them in one directory, so one would replace the other.
type DuplicateKeyfileError struct {
	Name   string // the keyfile's name
	Second string // the input that gave it a second time
}

func (e *DuplicateKeyfileError) Error() string {
	return fmt.Sprintf("multiple input keyfiles named %q (the second from %s): the live system keeps them in one directory; "+
		"rename one, or describe each interface in one place only", e.Name, e.Second)
}

// addKeyfile adds a keyfile named name, read or made from source, to files under key; two
// keyfiles may not share a name.
func addKeyfile(files initrd.Files, key, name, source string, data []byte) error {
	if _, dup := files[key]; dup {
		return &DuplicateKeyfileError{Name: name, Second: source}
	}
	files[key] = data
	return nil
}

// NMStateKeyfiles gives the keyfiles of the documents by their file names, as `nmstatectl gc`
// writes them; two interfaces that give one name are a *DuplicateKeyfileError.
func NMStateKeyfiles(docs []*nmstate.Document) (initrd.Files, error) {
	files := initrd.Files{}
	for _, doc := range docs {
		for _, kf := range doc.Keyfiles() {
			if err := addKeyfile(files, kf.Name, kf.Name, doc.File, kf.Data); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// NetworkKeyfiles reads the keyfiles and the NMState documents at the paths, and gives the
// payload members of them all and of the parsed documents more, with the documents. The
// interfaces nics name match their NICs by MAC.
func NetworkKeyfiles(keyfilePaths, nmstatePaths []string, nics []nmstate.NIC, more ...*nmstate.Document) (initrd.Files,
	[]*nmstate.Document, error) {
	return networkKeyfiles(input.ReadFile, keyfilePaths, nmstatePaths, nics, more...)
}

func networkKeyfiles(read readFunc, keyfilePaths, nmstatePaths []string, nics []nmstate.NIC, more ...*nmstate.Document) (initrd.Files,
	[]*nmstate.Document, error) {
	files, err := readKeyfiles(read, keyfilePaths)
	if err != nil {
		return nil, nil, err
	}
	docs, err := readNMState(read, nmstatePaths, nics)
	if err != nil {
		return nil, nil, err
	}
	docs = append(docs, more...)
	for _, doc := range docs {
		for _, kf := range doc.Keyfiles() {
			if err := addKeyfile(files, initrd.NetworkDir+"/"+kf.Name, kf.Name, doc.File, kf.Data); err != nil {
				return nil, nil, err
			}
		}
	}
	return files, docs, nil
}

// ReadNMState reads and checks NMState documents, binding the interfaces nics names to
// their MACs.
func ReadNMState(paths []string, nics []nmstate.NIC) ([]*nmstate.Document, error) {
	return readNMState(input.ReadFile, paths, nics)
}

func readNMState(read readFunc, paths []string, nics []nmstate.NIC) ([]*nmstate.Document, error) {
	var docs []*nmstate.Document
	for _, p := range paths {
		data, err := readNMStateFile(read, p)
		if err != nil {
			return nil, err
		}
		doc, err := nmstate.Parse(p, data)
		if err != nil {
			return nil, err
		}
		if err := doc.BindMACs(nics); err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// ReadNMStateFile reads an NMState document or agent-config.yaml; one over
// nmstate.MaxDocumentSize is an *nmstate.Error, as any other fault of such a file is.
func ReadNMStateFile(path string) ([]byte, error) {
	return readNMStateFile(input.ReadFile, path)
}

func readNMStateFile(read readFunc, path string) ([]byte, error) {
	data, err := read(path, nmstate.MaxDocumentSize, "an NMState document or agent-config.yaml")
	var tooLarge *input.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &nmstate.Error{File: path, Msg: fmt.Sprintf("larger than the %d MiB an NMState document or agent-config.yaml may be",
			nmstate.MaxDocumentSize>>20)}
	}
	return data, err
}

// agentHost reads the agent-config's host; its rootDeviceHints.deviceName is the
// installation disk when nothing else set one.
func (in Inputs) agentHost(src *Sources) (*nmstate.AgentHost, error) {
	data, err := readNMStateFile(in.readFile, in.AgentConfigPath)
	if err != nil {
		return nil, err
	}
	host, err := nmstate.ParseAgentConfig(in.AgentConfigPath, data, in.AgentHost)
	if err != nil {
		return nil, err
	}
	warn := func(format string, args ...any) {
		src.AgentWarnings = append(src.AgentWarnings, Warning{Kind: AgentConfigWarning, Source: in.AgentConfigPath,
			Text: fmt.Sprintf("host %s: ", host.Hostname) + fmt.Sprintf(format, args...)})
	}
	if host.Hostname != "" {
		if err := coreos.ValidateHostname(host.Hostname); err != nil {
			return nil, fmt.Errorf("%s: hosts[].hostname: %w", in.AgentConfigPath, err)
		}
		switch src.Hostname {
		case "":
			src.Hostname = host.Hostname
		case host.Hostname:
		default:
			return nil, fmt.Errorf("%s says hostname %s but %s says %s; keep one of them",
				in.ConfigPath, src.Hostname, in.AgentConfigPath, host.Hostname)
		}
	}
	if src.Installation.Disk != "" {
		if host.DeviceName != "" && host.DeviceName != src.Installation.Disk || len(host.OtherHints) > 0 {
			warn("rootDeviceHints are not used: the installation disk is %s", src.Installation.Disk)
		}
		return host, nil
	}
	if len(host.OtherHints) > 0 {
		return nil, fmt.Errorf("%s: host %s: rootDeviceHints %s are not supported (sno-iso installs to one named device); "+
			"give rootDeviceHints.deviceName alone, or the installation disk in sno.yaml or on the command line",
			in.AgentConfigPath, host.Hostname, strings.Join(host.OtherHints, ", "))
	}
	if host.DeviceName != "" {
		if _, err := coreos.ValidateDisk(host.DeviceName); err != nil {
			return nil, fmt.Errorf("%s: host %s: rootDeviceHints.deviceName: %w", in.AgentConfigPath, host.Hostname, err)
		}
		src.Installation.Disk, src.DiskSource = host.DeviceName, in.AgentConfigPath
	}
	return host, nil
}

func readKeyfile(read readFunc, path string) ([]byte, error) {
	data, err := read(path, maxKeyfileSize, "a NetworkManager keyfile")
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s is not UTF-8 text: not a NetworkManager keyfile", path)
	}
	if !hasConnectionSection(data) {
		return nil, fmt.Errorf("%s is not a NetworkManager keyfile: it has no [connection] section "+
			"(write one with nmcli --offline, or copy one from /etc/NetworkManager/system-connections)", path)
	}
	return data, nil
}

// hasConnectionSection reports whether a key file has the group every NetworkManager
// connection profile has.
func hasConnectionSection(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxKeyfileSize)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "[connection]" {
			return true
		}
	}
	return false
}

// ErrNoBootstrapInPlaceConfig says that none of a node's live Ignition configs is the
// bootstrap-in-place one.
var ErrNoBootstrapInPlaceConfig = errors.New("none of the live Ignition configs is the bootstrap-in-place config")

// SplitLiveIgnitions finds, among live Ignition config files given in any order (as
// coreos-installer takes them), the bootstrap-in-place config the node's media are made of,
// and the others, in their order, which merge into it (Inputs.LiveIgnitions).
func SplitLiveIgnitions(paths []string) (bip string, others []string, err error) {
	for _, p := range paths {
		data, err := input.ReadFile(p, coreos.MaxIgnitionSize, "an Ignition config")
		if err != nil {
			return "", nil, err
		}
		ig, _, err := coreos.ParseIgnition(data)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", p, err)
		}
		switch {
		case !ig.IsBootstrapInPlace():
			others = append(others, p)
		case bip != "":
			return "", nil, fmt.Errorf("%s and %s: %w", bip, p, coreos.ErrSecondBootstrapInPlace)
		default:
			bip = p
		}
	}
	if bip == "" {
		return "", nil, ErrNoBootstrapInPlaceConfig
	}
	return bip, others, nil
}
