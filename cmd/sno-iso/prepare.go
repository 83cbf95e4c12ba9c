package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// nodeInputs names what describes one node's boot media: the bootstrap-in-place Ignition,
// sno.yaml, install-config.yaml and command-line overrides. build, pxe build and serve all
// prepare a node through it, so they produce the same payload for the same inputs.
type nodeInputs struct {
	IgnitionPath      string
	ConfigPath        string
	InstallConfigPath string
	Flags             coreos.InstallationFlags
	AllowAnyIgnition  bool
	// LiveKargs and NetworkKeyfiles come from the flags: a nil list keeps sno.yaml's.
	LiveKargs       coreos.LiveKargs
	NetworkKeyfiles []string
	// Customizations are the --customize files: a nil list keeps sno.yaml's.
	Customizations []string
}

// preparedNode is a node's customization, validated and ready to embed.
type preparedNode struct {
	Installation coreos.Installation
	// Payload is what goes into the live initramfs: config.ign, and network keyfiles.
	Payload initrd.Files
	// LiveKargs are edits of the ISO's kernel arguments for the live system.
	LiveKargs coreos.LiveKargs
	// Output is sno.yaml's choice of media; build's flags override it.
	Output coreos.Output
	// Warnings are worth showing the user once the media is known to be writable.
	Warnings []string
}

// nodeFlags are the options of every command that prepares a node.
func nodeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ignition", Usage: "the bootstrap-in-place Ignition `FILE` (openshift-install create single-node-ignition-config)", Required: true},
		&cli.StringFlag{Name: "config", Usage: "sno.yaml `FILE` with the coreOSInstallation settings"},
		&cli.StringFlag{Name: "install-config", Usage: "take bootstrapInPlace.installationDisk from this install-config.yaml `FILE`"},
		&cli.StringFlag{Name: "installation-disk", Usage: "install to `DEVICE` (prefer /dev/disk/by-id or by-path names)"},
		&cli.BoolFlag{Name: "copy-network", Usage: "copy the live system's NetworkManager keyfiles to the installed node"},
		&cli.StringSliceFlag{Name: "append-karg", Usage: "kernel argument `KARG` for the installed node (repeatable)"},
		&cli.StringSliceFlag{Name: "delete-karg", Usage: "kernel argument `KARG` to remove on the installed node (repeatable)"},
		&cli.BoolFlag{Name: "wipe-disk", Usage: "release LVM, md and device-mapper holders and wipe signatures on the disk before installing"},
		&cli.DurationFlag{Name: "reboot-delay", Usage: "wait `DURATION` (whole minutes) after installing before rebooting", DefaultText: coreos.DefaultRebootDelay.String()},
		&cli.BoolFlag{Name: "allow-any-ignition", Usage: "embed a config that is not bootstrap-in-place, unchanged"},
		&cli.StringSliceFlag{Name: "customize", Usage: "Ignition config or MachineConfig `FILE` for the installed node, merged into the MachineConfig 99-installer-ignition-master (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-append", Usage: "kernel argument `KARG` for the live system, such as a static ip= (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-delete", Usage: "kernel argument `KARG` to remove from the live system's (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-replace", Usage: "replace the live kernel argument KEY=OLD by KEY=NEW, given as `KEY=OLD=NEW` (repeatable)"},
		&cli.StringSliceFlag{Name: "network-keyfile", Usage: "NetworkManager keyfile `FILE` for the live system, copied to the installed node unless --copy-network=false (repeatable)"},
	}
}

// nodeInputsFromFlags collects the node options of the command line; flags left unset keep
// the configuration files' values.
func nodeInputsFromFlags(c *cli.Context) nodeInputs {
	in := nodeInputs{
		IgnitionPath:      c.String("ignition"),
		ConfigPath:        c.String("config"),
		InstallConfigPath: c.String("install-config"),
		AllowAnyIgnition:  c.Bool("allow-any-ignition"),
	}
	f := &in.Flags
	f.Disk = c.String("installation-disk")
	if c.IsSet("copy-network") {
		v := c.Bool("copy-network")
		f.CopyNetwork = &v
	}
	if c.IsSet("append-karg") {
		f.AppendKargs = c.StringSlice("append-karg")
	}
	if c.IsSet("delete-karg") {
		f.DeleteKargs = c.StringSlice("delete-karg")
	}
	if c.IsSet("wipe-disk") {
		v := c.Bool("wipe-disk")
		f.WipeDisk = &v
	}
	if c.IsSet("reboot-delay") {
		v := c.Duration("reboot-delay")
		f.RebootDelay = &v
	}
	if c.IsSet("live-karg-append") {
		in.LiveKargs.Append = c.StringSlice("live-karg-append")
	}
	if c.IsSet("live-karg-delete") {
		in.LiveKargs.Delete = c.StringSlice("live-karg-delete")
	}
	if c.IsSet("live-karg-replace") {
		in.LiveKargs.Replace = c.StringSlice("live-karg-replace")
	}
	if c.IsSet("network-keyfile") {
		in.NetworkKeyfiles = c.StringSlice("network-keyfile")
	}
	if c.IsSet("customize") {
		in.Customizations = c.StringSlice("customize")
	}
	return in
}

// loadConfig reads sno.yaml; without one, every setting comes from elsewhere.
func (in nodeInputs) loadConfig() (*coreos.Config, error) {
	if in.ConfigPath == "" {
		return &coreos.Config{}, nil
	}
	return coreos.LoadConfig(in.ConfigPath)
}

// liveSettings merges the live kargs and keyfiles of sno.yaml and the flags: a list given
// on the command line replaces the file's.
func (in nodeInputs) liveSettings(cfg *coreos.Config) (coreos.LiveKargs, []string) {
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

// installation merges sno.yaml, install-config.yaml and the flags, in rising precedence.
func (in nodeInputs) installation(cfg *coreos.Config) (coreos.Installation, error) {
	inst := cfg.Installation
	if in.InstallConfigPath != "" {
		fromInstallConfig, err := coreos.LoadInstallConfig(in.InstallConfigPath)
		if err != nil {
			return inst, err
		}
		switch {
		case inst.Disk == "":
			inst.Disk = fromInstallConfig.Disk
		case inst.Disk != fromInstallConfig.Disk:
			return inst, fmt.Errorf("%s says installationDisk %s but %s says %s; keep one of them", in.ConfigPath, inst.Disk, in.InstallConfigPath, fromInstallConfig.Disk)
		}
	}
	return in.Flags.Override(inst), nil
}

// prepare reads and validates every input and returns the node's payload.
func (in nodeInputs) prepare() (*preparedNode, error) {
	cfg, err := in.loadConfig()
	if err != nil {
		return nil, err
	}
	inst, err := in.installation(cfg)
	if err != nil {
		return nil, err
	}
	liveKargs, keyfilePaths := in.liveSettings(cfg)
	keyfiles, err := readKeyfiles(keyfilePaths)
	if err != nil {
		return nil, err
	}
	// Keyfiles exist to give the node its address: without --copy-network the installed
	// system would fall back to DHCP after the reboot. An explicit false still wins.
	if len(keyfiles) > 0 && !cfg.CopyNetworkSet && in.Flags.CopyNetwork == nil {
		inst.CopyNetwork = true
	}
	customizations, customizationWarnings, err := in.customizations(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(in.IgnitionPath)
	if err != nil {
		return nil, err
	}
	live, warnings, err := coreos.PrepareLiveIgnition(raw, coreos.LiveIgnitionOptions{
		Installation: inst, AllowAnyIgnition: in.AllowAnyIgnition, Customizations: customizations,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.IgnitionPath, err)
	}
	p := &preparedNode{Installation: inst, Payload: initrd.Files{initrd.IgnitionPath: live}, LiveKargs: liveKargs, Output: cfg.Output}
	for _, w := range warnings {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %s", in.IgnitionPath, w))
	}
	p.Warnings = append(p.Warnings, customizationWarnings...)
	for path, data := range keyfiles {
		p.Payload[path] = data
	}
	if w := liveNetworkWarning(inst, liveKargs, len(keyfiles) > 0); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return p, nil
}

// image returns iso customized for the node. The ISO must be pristine: its embed area is
// replaced, not merged.
func (p *preparedNode) image(iso *isobuilder.LiveISO, isoPath string) (*isobuilder.Image, error) {
	existing, err := iso.Payload()
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("%s already carries embedded files (%v); start from the pristine RHCOS live ISO, or undo its customizations with `sno-iso reset`", isoPath, existing.Paths())
	}
	if len(networkFiles(p.Payload)) > 0 {
		if err := requireNetworkSupport(iso, isoPath); err != nil {
			return nil, err
		}
	}
	var kargs []isobuilder.Patch
	if !p.LiveKargs.IsZero() {
		if kargs, err = liveKargsPatches(iso, isoPath, p.LiveKargs); err != nil {
			return nil, err
		}
	}
	patch, err := iso.PayloadPatch(p.Payload)
	var tooLarge *isobuilder.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("the bootstrap-in-place config does not fit the ISO: %w; make it smaller: drop manifests you can apply after the install, or fetch large files from a URL in the Ignition config; or pass --grow-embed-area to rebuild the ISO with a larger area", err)
	}
	if err != nil {
		return nil, err
	}
	return iso.Image(append(kargs, patch)...)
}
