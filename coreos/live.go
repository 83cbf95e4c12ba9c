package coreos

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/progress"
)

// MaxIgnitionSize bounds an Ignition config read as input, as initrd bounds one read from an
// archive.
const MaxIgnitionSize = initrd.MaxIgnitionSize

// LiveIgnitionOptions are the inputs of PrepareLiveIgnition besides the config itself.
type LiveIgnitionOptions struct {
	Installation Installation
	// AllowAnyIgnition lets a config that is not bootstrap-in-place through, validated
	// and unchanged, without install-to-disk.
	AllowAnyIgnition bool
	// Customizations for the installed node are merged into one MachineConfig that the
	// config carries at CustomizationManifestPath(RoleMaster), where bootkube hands it to
	// the Machine Config Operator. Their own warnings are left to the caller
	// (Customization.Warnings); the merge's are returned.
	Customizations []*Customization
	// Hostname, when set, is written to /etc/hostname of the live system, so that bootkube's
	// node registers under it, and of the installed one through the master MachineConfig.
	Hostname string
	// Report, when set, adds the progress hooks: the live system reports its phases, and a
	// MachineConfig makes the installed system report its first boot.
	Report *progress.Hooks
	// PreInstall and PostInstall are scripts the live system runs, in order, before
	// install-to-disk writes the disk and after it (coreos-installer's --pre-install and
	// --post-install).
	PreInstall, PostInstall []InstallScript
	// IgnitionCAs are PEM bundles that Ignition trusts in the live system and, through the
	// master MachineConfig, on the installed node (coreos-installer's --ignition-ca).
	IgnitionCAs [][]byte
	// LiveFragments are more configs for the live system, merged into it in order
	// (coreos-installer's --live-ignition beside the bootstrap-in-place config).
	LiveFragments []LiveFragment
}

// hasAdditions tells whether opts asks for any of coreos-installer's live additions.
func (opts LiveIgnitionOptions) hasAdditions() bool {
	return len(opts.PreInstall)+len(opts.PostInstall)+len(opts.IgnitionCAs)+len(opts.LiveFragments) > 0
}

// ErrSecondBootstrapInPlace says that a live config to merge in is a bootstrap-in-place config
// too: a node boots one.
var ErrSecondBootstrapInPlace = errors.New("a second bootstrap-in-place config: the live system runs one; " +
	"give the other configs' own files and units only")

// PrepareLiveIgnition turns the bootstrap-in-place Ignition from openshift-install into the
// live config to embed: validated, with install-to-disk set from the installation, in the
// input's spec version. Warnings cover both the config and the installation settings.
func PrepareLiveIgnition(raw []byte, opts LiveIgnitionOptions) ([]byte, []Warning, error) {
	ig, warnings, err := ParseIgnition(raw)
	if err != nil {
		return nil, warnings, err
	}
	if opts.Hostname != "" {
		if err := ValidateHostname(opts.Hostname); err != nil {
			return nil, warnings, err
		}
	}
	if !ig.IsBootstrapInPlace() {
		if !opts.AllowAnyIgnition {
			return nil, warnings, ErrNotBootstrapInPlace
		}
		if len(opts.Customizations) > 0 || opts.Hostname != "" || opts.hasAdditions() {
			return nil, warnings, errors.New("customizations of the installed node, its hostname, Ignition CAs, live configs and " +
				"install scripts need a bootstrap-in-place config: they reach the node through its install-to-disk, bootkube and " +
				"Machine Config Operator")
		}
		if opts.Installation.Disk != "" {
			warnings = append(warnings, Warning{Path: DiskSetting,
				Message: "ignored: the config is not bootstrap-in-place, so no install-to-disk is added"})
		}
		if opts.Report != nil {
			warnings = append(warnings, Warning{Message: "no progress reports: " +
				"the config is not bootstrap-in-place, it has no units to report from"})
		}
		return raw, warnings, nil
	}
	inst := opts.Installation
	if inst.PreInstall, err = installScriptPaths("pre", opts.PreInstall); err != nil {
		return nil, warnings, err
	}
	if inst.PostInstall, err = installScriptPaths("post", opts.PostInstall); err != nil {
		return nil, warnings, err
	}
	for _, ca := range opts.IgnitionCAs {
		if err := CheckCABundle(ca); err != nil {
			return nil, warnings, fmt.Errorf("an Ignition CA: %w", err)
		}
	}
	var fragmentWarnings []Warning
	for _, f := range opts.LiveFragments {
		fragment, own, err := ParseIgnition(f.Data)
		if err != nil {
			return nil, warnings, fmt.Errorf("%s: %w", f.Source, err)
		}
		if fragment.IsBootstrapInPlace() {
			return nil, warnings, fmt.Errorf("%s: %w", f.Source, ErrSecondBootstrapInPlace)
		}
		if versionIndex(fragment.Version) > versionIndex(ig.Version) {
			fragmentWarnings = append(fragmentWarnings, Warning{Path: f.Source, Message: fmt.Sprintf(
				"Ignition %s is newer than the bootstrap-in-place config's %s: the live system's Ignition must read %s, "+
					"or it fails to boot; write the config in spec %s if you can", fragment.Version, ig.Version, fragment.Version, ig.Version)})
		}
		for _, w := range own {
			w.Path = sourcePrefix(f.Source) + w.Path
			fragmentWarnings = append(fragmentWarnings, w)
		}
	}
	diskWarnings, err := inst.Validate()
	if err != nil {
		if opts.Installation.Disk == "" {
			if info, inspectErr := InspectIgnition(raw); inspectErr == nil && info.Installation.Disk != "" {
				err = fmt.Errorf("%w (the input's install-to-disk.sh targets %s: set it explicitly to keep it)", err, info.Installation.Disk)
			}
		}
		return nil, warnings, err
	}
	if err := ig.setInstallToDisk(inst, opts.Report != nil); err != nil {
		return nil, warnings, err
	}
	customizations := opts.Customizations
	if opts.Hostname != "" {
		if err := ig.setHostname(opts.Hostname); err != nil {
			return nil, warnings, err
		}
		hostname, err := hostnameCustomization(opts.Hostname)
		if err != nil {
			return nil, warnings, err
		}
		customizations = append(slices.Clip(customizations), hostname)
	}
	out, err := ig.Marshal()
	if err != nil {
		return nil, warnings, errors.Join(errors.New("writing the live Ignition config"), err)
	}
	if opts.Report != nil {
		if out, err = addReportHooks(out, *opts.Report); err != nil {
			return nil, warnings, err
		}
		hooks, err := reportCustomization(*opts.Report)
		if err != nil {
			return nil, warnings, err
		}
		customizations = append(slices.Clone(customizations), hooks)
	}
	if len(opts.IgnitionCAs) > 0 {
		cas, err := caCustomization(opts.IgnitionCAs)
		if err != nil {
			return nil, warnings, err
		}
		customizations = append(slices.Clip(customizations), cas)
	}
	var customizationWarnings []Warning
	if len(customizations) > 0 {
		if out, customizationWarnings, err = addCustomizationManifest(out, ig.Version, customizations); err != nil {
			return nil, warnings, err
		}
	}
	if opts.hasAdditions() {
		if out, err = addLiveAdditions(out, opts.PreInstall, opts.PostInstall, opts.IgnitionCAs, opts.LiveFragments); err != nil {
			return nil, warnings, err
		}
	}
	// Report what the output config warns about, not the input: the input's install-to-disk
	// (with its missing [Install] section) is gone.
	_, outWarnings, err := ParseIgnition(out)
	if err != nil {
		return nil, warnings, errors.Join(errors.New("re-reading the live Ignition config"), err)
	}
	outWarnings = append(append(outWarnings, fragmentWarnings...), customizationWarnings...)
	for _, w := range diskWarnings {
		outWarnings = append(outWarnings, Warning{Path: DiskSetting, Message: w})
	}
	return out, outWarnings, nil
}
