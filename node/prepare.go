package node

import (
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/progress"
)

// Node is one node's customization, validated and ready to embed.
type Node struct {
	Installation coreos.Installation
	// Payload is what goes into the live initramfs: config.ign, and network keyfiles.
	Payload initrd.Files
	// LiveKargs are edits of the ISO's kernel arguments for the live system.
	LiveKargs coreos.LiveKargs
	// Output is sno.yaml's choice of media.
	Output coreos.Output
	// Warnings are worth showing the user once the media is known to be writable.
	Warnings []Warning
}

// Load reads and prepares the node: Inputs.Load, then Prepare. files lists what it read or
// looked for, also on error.
func Load(in Inputs) (n *Node, files []string, err error) {
	src, files, err := in.Load()
	if err != nil {
		return nil, files, err
	}
	n, err = Prepare(src)
	return n, files, err
}

// Prepare validates the node's sources and makes its payload: the live Ignition with
// install-to-disk set and the customizations merged, and the keyfiles.
func Prepare(src *Sources) (*Node, error) {
	inst := src.Installation
	// Keyfiles exist to give the node its address: without copyNetwork the installed
	// system would fall back to DHCP after the reboot. An explicit false still wins.
	if len(src.Keyfiles) > 0 && !src.CopyNetworkSet {
		inst.CopyNetwork = true
	}
	opts := coreos.LiveIgnitionOptions{Installation: inst, AllowAnyIgnition: src.AllowAnyIgnition, Customizations: src.Customizations,
		Hostname: src.Hostname, PreInstall: src.PreInstall, PostInstall: src.PostInstall, IgnitionCAs: src.IgnitionCAs,
		LiveFragments: src.LiveFragments}
	if src.ReportURL != "" {
		opts.Report = &progress.Hooks{URL: src.ReportURL, CA: src.ReportCA}
	}
	live, warnings, err := coreos.PrepareLiveIgnition(src.Ignition, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.IgnitionName, err)
	}
	n := &Node{Installation: inst, Payload: initrd.Files{initrd.IgnitionPath: live}, LiveKargs: src.LiveKargs, Output: src.Config.Output}
	for _, w := range warnings {
		if w.Path == coreos.DiskSetting {
			// The disk came from sno.yaml, install-config.yaml or an override, not the config.
			n.Warnings = append(n.Warnings, Warning{Kind: DiskWarning, Text: w.String(), Setting: w.Path, Source: src.DiskSource})
			continue
		}
		n.Warnings = append(n.Warnings, Warning{Kind: IgnitionWarning, Text: fmt.Sprintf("%s: %s", src.IgnitionName, w)})
	}
	for _, w := range src.CustomizationWarnings {
		n.Warnings = append(n.Warnings, Warning{Kind: CustomizationWarning, Text: w})
	}
	n.Warnings = append(n.Warnings, src.AgentWarnings...)
	for path, data := range src.Keyfiles {
		n.Payload[path] = data
	}
	if w, ok := liveNetworkWarning(inst, src.LiveKargs, len(src.Keyfiles) > 0); ok {
		n.Warnings = append(n.Warnings, w)
	}
	return n, nil
}

// liveNetworkWarning warns when the live system gets network settings that the installed
// node will not keep, the trap of static addresses falling back to DHCP after the reboot.
func liveNetworkWarning(inst coreos.Installation, kargs coreos.LiveKargs, keyfiles bool) (Warning, bool) {
	if inst.CopyNetwork {
		return Warning{}, false
	}
	if keyfiles {
		return Warning{Kind: KeyfilesNotCopied, Text: "copyNetwork is false: the network keyfiles configure the live system only, the " +
			"installed node will use DHCP after the reboot"}, true
	}
	const setting = "copyNetwork: true"
	for _, k := range kargs.Append {
		if HasIPKarg(k) {
			return Warning{Kind: LiveIPNotCopied, Setting: setting,
				Text: fmt.Sprintf("live kernel argument %s configures the live system only: set %s so that the installed node keeps it after the "+
					"reboot", k, setting)}, true
		}
	}
	return Warning{}, false
}

// HasIPKarg reports whether kargs configure the network statically (an ip= argument).
func HasIPKarg(kargs string) bool {
	for _, k := range strings.Fields(kargs) {
		if strings.HasPrefix(k, "ip=") {
			return true
		}
	}
	return false
}

// hasNetworkFiles reports whether a payload holds network keyfiles.
func hasNetworkFiles(files initrd.Files) bool {
	for p := range files {
		if initrd.IsNetworkFile(p) {
			return true
		}
	}
	return false
}
