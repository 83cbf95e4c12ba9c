package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/urfave/cli/v2"
)

// nodeFlags are the options of every command that prepares a node.
func nodeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ignition", Usage: "the bootstrap-in-place Ignition `FILE` (openshift-install create " +
			"single-node-ignition-config)", Required: true},
		&cli.StringFlag{Name: "config", Usage: "sno.yaml `FILE` with the coreOSInstallation settings"},
		&cli.StringFlag{Name: "install-config", Usage: "take bootstrapInPlace.installationDisk from this install-config.yaml `FILE`"},
		// --dest-device is coreos-installer install's name for the same device.
		&cli.StringFlag{Name: "installation-disk", Aliases: []string{"dest-device"}, Usage: "install to `DEVICE` (prefer /dev/disk/by-id or " +
			"by-path names)"},
		&cli.BoolFlag{Name: "copy-network", Usage: "copy the live system's NetworkManager keyfiles to the installed node",
			DefaultText: "sno.yaml's copyNetwork, else true with network keyfiles and false without"},
		&cli.StringSliceFlag{Name: "append-karg", Usage: "kernel argument `KARG` for the installed node (repeatable)"},
		&cli.StringSliceFlag{Name: "delete-karg", Usage: "kernel argument `KARG` to remove on the installed node (repeatable)"},
		&cli.BoolFlag{Name: "wipe-disk", Usage: "release LVM, md and device-mapper holders and wipe signatures on the disk before installing",
			DefaultText: "sno.yaml's wipeDisk, else false"},
		&cli.DurationFlag{Name: "reboot-delay", Usage: "wait `DURATION` (whole minutes) after installing before " +
			"rebooting", DefaultText: "sno.yaml's rebootDelay, else " + shortDuration(coreos.DefaultRebootDelay)},
		&cli.BoolFlag{Name: "allow-any-ignition", Usage: "embed a config that is not bootstrap-in-place, unchanged"},
		&cli.StringSliceFlag{Name: "customize", Usage: "Ignition config or MachineConfig `FILE` for the installed node, merged into the " +
			"MachineConfig 99-installer-ignition-master (repeatable)"},
		&cli.StringSliceFlag{Name: "live-ignition", Usage: "Ignition config `FILE` for the live system, merged into the bootstrap-in-place " +
			"config (repeatable)"},
		&cli.StringSliceFlag{Name: "ignition-ca", Usage: "PEM CA bundle `FILE` that Ignition trusts on the live system and the installed node " +
			"(repeatable)"},
		&cli.StringSliceFlag{Name: "pre-install", Usage: "script `FILE` the live system runs before it writes the installation disk; " +
			"a failure stops the install (repeatable)"},
		&cli.StringSliceFlag{Name: "post-install", Usage: "script `FILE` the live system runs after it writes the installation disk, " +
			"before the reboot (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-append", Usage: "kernel argument `KARG` for the live system, such as a static ip= (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-delete", Usage: "kernel argument `KARG` to remove from the live system's (repeatable)"},
		&cli.StringSliceFlag{Name: "live-karg-replace", Usage: "replace the live kernel argument KEY=OLD by KEY=NEW, given as `KEY=OLD=NEW` " +
			"(repeatable)"},
		&cli.StringSliceFlag{Name: "network-keyfile", Usage: "NetworkManager keyfile `FILE` for the live system, copied to the installed node " +
			"unless --copy-network=false (repeatable)"},
		&cli.StringSliceFlag{Name: "network-nmstate", Usage: "NMState `FILE` (as nmstatectl and coreos-installer read them), converted to " +
			"keyfiles for the live system (repeatable)"},
		&cli.StringFlag{Name: "agent-config", Usage: "take the node's network, and its installation disk when nothing else gives one, from " +
			"this agent-config.yaml `FILE`"},
		&cli.StringFlag{Name: "host", Usage: "the agent-config host `HOSTNAME` to take (default: its only host)"},
		&cli.StringFlag{Name: "report-url", Usage: "the node reports its install's phases to `URL`, its report URL from `sno-iso serve urls` " +
			"(see sno-iso wait)"},
		&cli.StringFlag{Name: "report-ca", Usage: "PEM `FILE` that verifies an https --report-url's server: its self-signed certificate, or " +
			"its chain's root"},
	}
}

// nodeFileFlags are the node options that name files to read.
var nodeFileFlags = []string{
	"ignition", "config", "install-config", "customize", "network-keyfile", "network-nmstate", "agent-config", "report-ca",
	"live-ignition", "ignition-ca", "pre-install", "post-install",
}

// checkNodeFlags refuses, as usage errors naming the flag, what the node options' values
// alone tell is wrong: - for a node's input file (a node's inputs are files, read again when
// serve sees them change and named in messages), and a reboot delay shutdown cannot take.
func checkNodeFlags(c *cli.Context) error {
	for _, name := range nodeFileFlags {
		if slices.Contains(c.StringSlice(name), "-") || c.String(name) == "-" {
			return usagef("--%s -: %s reads files, not standard input; save it to a file and give its path", name, c.Command.HelpName)
		}
	}
	if c.IsSet("host") && !c.IsSet("agent-config") {
		return usagef("--host chooses a host of the --agent-config file; give --agent-config too")
	}
	if c.IsSet("installation-disk") {
		if _, err := coreos.ValidateDisk(c.String("installation-disk")); err != nil {
			return usagef("--installation-disk: %v", err)
		}
	}
	if c.IsSet("reboot-delay") {
		if err := coreos.ValidateRebootDelay(c.Duration("reboot-delay")); err != nil {
			return usagef("--reboot-delay %v", err)
		}
	}
	if c.IsSet("report-url") {
		if err := reports.CheckURL(c.String("report-url")); err != nil {
			return usagef("--report-url: %v", err)
		}
	}
	return nil
}

// nodeInputsFromFlags collects the node options of the command line; flags left unset keep
// the configuration files' values.
func nodeInputsFromFlags(c *cli.Context) node.Inputs {
	in := node.Inputs{
		IgnitionPath:      c.String("ignition"),
		ConfigPath:        c.String("config"),
		InstallConfigPath: c.String("install-config"),
		AllowAnyIgnition:  c.Bool("allow-any-ignition"),
		ReportURL:         c.String("report-url"),
	}
	f := &in.Overrides
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
	if c.IsSet("network-nmstate") {
		in.NetworkNMState = c.StringSlice("network-nmstate")
	}
	in.AgentConfigPath, in.AgentHost = c.String("agent-config"), c.String("host")
	in.LiveIgnitions, in.IgnitionCAs = c.StringSlice("live-ignition"), c.StringSlice("ignition-ca")
	in.PreInstall, in.PostInstall = c.StringSlice("pre-install"), c.StringSlice("post-install")
	return in
}

// openNode opens the --iso of a command that prepares a node, and loads and prepares the
// node from the flags. inputs are the files the command line and the node's configuration
// name (sno.yaml's keyfiles and customizations too): no output may be one of them.
func openNode(c *cli.Context) (iso *isobuilder.LiveISO, isoPath string, n *node.Node, inputs []string, err error) {
	isoPath = c.String("iso")
	if iso, err = openISOToCopy(c, isoPath); err != nil {
		return nil, "", nil, nil, err
	}
	in := nodeInputsFromFlags(c)
	if in.ReportCA, err = readReportCA(c.String("report-ca")); err != nil {
		iso.Close()
		return nil, "", nil, nil, fmt.Errorf("--report-ca: %w", err)
	}
	n, files, err := node.Load(in)
	if err != nil {
		iso.Close()
		return nil, "", nil, nil, err
	}
	return iso, isoPath, n, append(commandInputs(c), files...), nil
}

// nodeError adds the ISO's name and the command line's advice to an error of preparing a
// node's media.
func nodeError(err error, isoPath string) error {
	var tooLarge *isobuilder.TooLargeError
	var embedded *node.EmbeddedFilesError
	var isoErr *node.ISOError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("the bootstrap-in-place config does not fit the ISO: %w; make it smaller: drop manifests you can apply after the "+
			"install, or fetch large files from a URL in the Ignition config; or pass --grow-embed-area to rebuild the ISO with a larger area", err)
	case errors.As(err, &embedded):
		return fmt.Errorf("%s already carries embedded files (%v); start from the pristine RHCOS live ISO, or undo its customizations with "+
			"`sno-iso reset`", isoPath, embedded.Paths)
	case errors.Is(err, isobuilder.ErrNoNetworkSupport):
		return networkSupportError(isoPath, err)
	case errors.Is(err, node.ErrNoLiveKargs), errors.As(err, &isoErr):
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	return err
}

// readReportCA is the certificate of the PEM file path that verifies an https report URL's
// server (nil for no file).
func readReportCA(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	chain, err := input.ReadFile(path, maxCAFile, "a PEM certificate")
	if err != nil {
		return nil, err
	}
	ca, err := reports.TrustAnchor(chain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ca, nil
}
