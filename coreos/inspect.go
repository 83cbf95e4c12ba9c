package coreos

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vincent-petithory/dataurl"
	"gopkg.in/yaml.v3"
)

// maxInspectedFileSize bounds a decoded file: an Ignition config embedded in a live ISO is
// at most a few MiB, so a bigger file is corrupt or hostile input.
const maxInspectedFileSize = 16 << 20

// InstallInfo is what an Ignition config's install-to-disk will do.
type InstallInfo struct {
	// Installation holds the disk and the options found in install-to-disk.sh.
	Installation Installation
	// InstallerArgs are the arguments of `coreos-installer install` as the script passes
	// them, unquoted, the disk included.
	InstallerArgs []string
	// MachineConfigs are the MachineConfig manifests under /opt/openshift/openshift/,
	// which bootkube renders into the installed node's configuration.
	MachineConfigs []MachineConfigManifest
	// Hostname is the live system's /etc/hostname, "" when the config writes none.
	Hostname string
	// InstalledHostname is the /etc/hostname that a master MachineConfig writes on the
	// installed node, "" when none does.
	InstalledHostname string
}

// MachineConfigManifest names one MachineConfig manifest of a bootstrap-in-place config.
type MachineConfigManifest struct {
	Path string // e.g. /opt/openshift/openshift/99_openshift-machineconfig_99-master-ssh.yaml
	Name string // metadata.name
	Role string // the machineconfiguration.openshift.io/role label
	// Hostname is what the MachineConfig writes to /etc/hostname, "" when it does not.
	Hostname string
}

// coreos-installer install options that take a value; any other word that does not start
// with "-" is the destination device.
var installerValueOptions = map[string]bool{
	"-i": true, "--ignition-file": true, "-I": true, "--ignition-url": true, "--ignition-hash": true,
	"-p": true, "--platform": true, "--console": true, "--firstboot-args": true,
	"--append-karg": true, "--delete-karg": true, "--network-dir": true,
	"--save-partlabel": true, "--save-partindex": true, "-u": true, "--image-url": true,
	"-f": true, "--image-file": true, "-s": true, "--stream": true, "--stream-base-url": true,
	"--architecture": true, "--fetch-retries": true, "-c": true, "--config-file": true,
}

// InspectIgnition reports the installation disk and coreos-installer options of a
// bootstrap-in-place config (for instance one read back from an ISO), from the
// install-to-disk.sh it carries. It accepts any 3.x config shape without validating it.
func InspectIgnition(raw []byte) (*InstallInfo, error) {
	var v configView
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not an Ignition config: %v", err)
	}
	info := &InstallInfo{}
	var script []byte
	for i, f := range v.Storage.Files {
		var err error
		switch {
		case f.Path == InstallToDiskScriptPath:
			script, err = fileContents(f)
		case f.Path == HostnamePath:
			var data []byte
			if data, err = fileContents(f); err == nil {
				info.Hostname = strings.TrimSpace(string(data))
			}
		case path.Dir(f.Path) == "/opt/openshift/openshift" && (path.Ext(f.Path) == ".yaml" || path.Ext(f.Path) == ".yml"):
			var data []byte
			if data, err = fileContents(f); err == nil {
				if mc, ok := machineConfig(f.Path, data); ok {
					info.MachineConfigs = append(info.MachineConfigs, mc)
					if mc.Role == RoleMaster && mc.Hostname != "" {
						info.InstalledHostname = mc.Hostname
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("$.storage.files.%d (%s): %w", i, f.Path, err)
		}
	}
	sort.Slice(info.MachineConfigs, func(i, j int) bool { return info.MachineConfigs[i].Path < info.MachineConfigs[j].Path })
	if script == nil {
		return nil, fmt.Errorf("the config has no %s: "+
			"it is not a bootstrap-in-place config, or its install-to-disk was removed", InstallToDiskScriptPath)
	}
	if err := info.readScript(script); err != nil {
		return nil, fmt.Errorf("%s: %w", InstallToDiskScriptPath, err)
	}
	return info, nil
}

// fileContents decodes a file entry's data URL, gunzipping it when compressed.
func fileContents(f fileView) ([]byte, error) {
	if f.Contents.Source == nil {
		return nil, errors.New("no contents.source")
	}
	u, err := dataurl.DecodeString(*f.Contents.Source)
	if err != nil {
		return nil, fmt.Errorf("contents.source is not a data URL: %v", err)
	}
	compression := ""
	if f.Contents.Compression != nil {
		compression = *f.Contents.Compression
	}
	switch compression {
	case "":
		return u.Data, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(u.Data))
		if err != nil {
			return nil, fmt.Errorf("gzip contents: %v", err)
		}
		data, err := io.ReadAll(io.LimitReader(zr, maxInspectedFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("gzip contents: %v", err)
		}
		if len(data) > maxInspectedFileSize {
			return nil, fmt.Errorf("decompressed contents exceed %d bytes", maxInspectedFileSize)
		}
		return data, nil
	}
	return nil, fmt.Errorf("unknown compression %q", compression)
}

func machineConfig(p string, data []byte) (MachineConfigManifest, bool) {
	var m struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Config any `yaml:"config"`
		} `yaml:"spec"`
	}
	if yaml.Unmarshal(data, &m) != nil || m.Kind != machineConfigKind {
		return MachineConfigManifest{}, false
	}
	mc := MachineConfigManifest{Path: p, Name: m.Metadata.Name, Role: m.Metadata.Labels[machineConfigRoleLabel]}
	// spec.config is an Ignition config: read its files as the live config's are.
	var config configView
	if raw, err := json.Marshal(m.Spec.Config); err == nil && json.Unmarshal(raw, &config) == nil {
		for _, f := range config.Storage.Files {
			if f.Path != HostnamePath {
				continue
			}
			if data, err := fileContents(f); err == nil {
				mc.Hostname = strings.TrimSpace(string(data))
			}
		}
	}
	return mc, true
}

// readScript finds the `coreos-installer install` command, the wipe step and the reboot
// delay in an install-to-disk script, the installer's or sno-iso's.
func (info *InstallInfo) readScript(script []byte) error {
	text := strings.ReplaceAll(string(script), "\\\n", "")
	found := false
	for n, line := range strings.Split(text, "\n") {
		words, err := splitShellWords(strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("line %d: %v", n+1, err)
		}
		switch {
		case len(words) >= 2 && path.Base(words[0]) == "coreos-installer" && words[1] == "install":
			if found {
				return fmt.Errorf("line %d: a second coreos-installer install command", n+1)
			}
			found = true
			info.InstallerArgs = words[2:]
			if err := info.readInstallerArgs(words[2:]); err != nil {
				return fmt.Errorf("line %d: %v", n+1, err)
			}
		case len(words) == 3 && words[0] == installScriptRunner && words[1] == "pre":
			info.Installation.PreInstall = append(info.Installation.PreInstall, words[2])
		case len(words) == 3 && words[0] == installScriptRunner && words[1] == "post":
			info.Installation.PostInstall = append(info.Installation.PostInstall, words[2])
		case len(words) >= 1 && words[0] == "wipefs":
			info.Installation.WipeDisk = true
		case len(words) >= 3 && words[0] == "shutdown" && words[1] == "-r" && strings.HasPrefix(words[2], "+"):
			minutes, err := strconv.Atoi(words[2][1:])
			if err == nil && minutes >= 0 && minutes <= 24*60 {
				delay := time.Duration(minutes) * time.Minute
				info.Installation.RebootDelay = &delay
			}
		}
	}
	if !found {
		return errors.New("no coreos-installer install command")
	}
	return nil
}

func (info *InstallInfo) readInstallerArgs(args []string) error {
	inst := &info.Installation
	for i := 0; i < len(args); i++ {
		opt, value, hasValue := strings.Cut(args[i], "=")
		if !strings.HasPrefix(opt, "--") {
			opt, hasValue = args[i], false
		}
		switch {
		case opt == "-n" || opt == "--copy-network":
			inst.CopyNetwork = true
		case installerValueOptions[opt]:
			if !hasValue {
				if i+1 == len(args) {
					return fmt.Errorf("option %s without a value", opt)
				}
				i++
				value = args[i]
			}
			switch opt {
			case "--append-karg":
				inst.AppendKargs = append(inst.AppendKargs, value)
			case "--delete-karg":
				inst.DeleteKargs = append(inst.DeleteKargs, value)
			}
		case strings.HasPrefix(opt, "-"):
			// A flag without a value (--insecure, --offline, ...).
		default:
			if inst.Disk != "" {
				return fmt.Errorf("two destination devices, %s and %s", inst.Disk, args[i])
			}
			inst.Disk = args[i]
		}
	}
	if inst.Disk == "" {
		return errors.New("coreos-installer install without a destination device")
	}
	return nil
}
