package main

import (
	"errors"
	"fmt"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

// coreos-installer's iso customize and pxe customize for single-node media: the options map
// to the node options of sno-iso build (and pxe build), so the install the media start is
// build's install-to-disk unit and an ISO is byte for byte the one build writes for the same
// inputs.

// customizeCommonFlags are the options iso customize and pxe customize share, with
// coreos-installer's names and placeholders.
func customizeCommonFlags() []cli.Flag {
	slice := func(name, usage string) cli.Flag { return &cli.StringSliceFlag{Name: name, Usage: usage} }
	return []cli.Flag{
		slice("dest-ignition", "Ignition config fragment `path` for the installed node (sno-iso build --customize)"),
		&cli.StringFlag{Name: "dest-device", Usage: "Install destination device `path`"},
		slice("dest-console", "Kernel console `spec` for the installed node (a console= kernel argument)"),
		slice("dest-karg-append", "Destination kernel argument `arg` to append"),
		slice("dest-karg-delete", "Destination kernel argument `arg` to delete"),
		slice("network-keyfile", "NetworkManager keyfile `path` for the live and installed systems"),
		slice("network-nmstate", "NMState config `path` for the live and installed systems"),
		slice("ignition-ca", "Ignition PEM CA bundle `path` for the live and installed systems"),
		slice("pre-install", "Script `path` to run before the install writes the disk"),
		slice("post-install", "Script `path` to run after the install, before the reboot"),
		slice("installer-config", "coreos-installer install config `path` (dest-device, append-karg, delete-karg, console, copy-network)"),
		slice("live-ignition", "Ignition config `path` for the live system: the bootstrap-in-place config, and fragments merged into it"),
	}
}

// dropInISOCustomizeCommand is coreos-installer's iso customize: sno-iso build with the same
// inputs.
func dropInISOCustomizeCommand() *cli.Command {
	slice := func(name, usage string) cli.Flag { return &cli.StringSliceFlag{Name: name, Usage: usage} }
	return &cli.Command{
		Name: "customize", Usage: "Customize a CoreOS live ISO image (single node: sno-iso build)", ArgsUsage: "ISO",
		Flags: append(customizeCommonFlags(),
			slice("live-karg-append", "Live kernel argument `arg` to append"),
			slice("live-karg-delete", "Live kernel argument `arg` to delete"),
			slice("live-karg-replace", "Live kernel argument to replace, `KEY=OLD=NEW`"),
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "Overwrite existing customizations (start from the pristine ISO)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Write ISO to a new output `path` (- for stdout)"},
		),
		Action: dropInISOCustomize,
	}
}

// dropInPXECustomizeCommand is coreos-installer's pxe customize: the initramfs sno-iso pxe
// build writes for the same inputs, made from the given one.
func dropInPXECustomizeCommand() *cli.Command {
	return &cli.Command{
		Name: "customize", Usage: "Create a custom live PXE boot config (single node: the initramfs of sno-iso pxe build)",
		ArgsUsage: "INITRAMFS",
		Flags: append(customizeCommonFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Write initramfs to a new output `path` (- for stdout)"},
		),
		Action: dropInPXECustomize,
	}
}

func dropInISOCustomize(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	if err := requireLiveIgnition(c); err != nil {
		return err
	}
	if !c.IsSet("output") {
		return usagef("sno-iso's iso customize writes a new ISO: give -o OUTPUT (or -o - for standard output)")
	}
	args, err := customizeNodeArgs(c)
	if err != nil {
		return err
	}
	if c.Bool("force") {
		args = append(args, "--overwrite-customization")
	} else if err := refuseCustomizedISO(c, isoPath); err != nil {
		return err
	}
	for _, name := range []string{"live-karg-append", "live-karg-delete", "live-karg-replace"} {
		for _, v := range c.StringSlice(name) {
			args = append(args, "--"+name+"="+v)
		}
	}
	args = append([]string{c.App.Name, "build", "--iso", isoPath, "--output=" + c.String("output")}, args...)
	app := newApp(c.App.Reader, c.App.Writer, c.App.ErrWriter)
	app.Name = c.App.Name
	return app.RunContext(c.Context, args)
}

// refuseCustomizedISO refuses an ISO that already carries a customization (embedded files or
// edited kernel arguments) in coreos-installer's words, which scripts grep for.
func refuseCustomizedISO(c *cli.Context, isoPath string) error {
	iso, err := openISO(c, isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	if err := iso.CheckPristine(); errors.Is(err, isobuilder.ErrCustomized) {
		return fmt.Errorf("This ISO image is already customized; use -f to force. (%s: %v; with -f sno-iso customizes it "+
			"from its pristine state and leaves the input as it is)", isoPath, err)
	} else if err != nil {
		return err
	}
	return nil
}

func dropInPXECustomize(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("pxe customize takes one INITRAMFS argument (the live initramfs), got %d", c.NArg())
	}
	if err := requireLiveIgnition(c); err != nil {
		return err
	}
	initramfs := c.Args().First()
	out := c.String("output")
	if out == "" {
		return usagef("pxe customize writes a new initramfs: give -o OUTPUT (or -o - for standard output)")
	}
	args, err := customizeNodeArgs(c)
	if err != nil {
		return err
	}
	// The node's inputs are read as pxe build reads them: from its node options.
	app := newApp(c.App.Reader, c.App.Writer, c.App.ErrWriter)
	app.Name = c.App.Name
	app.Commands = []*cli.Command{{Name: "customize", Flags: nodeFlags(), Before: checkNodeFlags,
		Action: func(nc *cli.Context) error { return writeCustomizedInitramfs(nc, initramfs, out) }}}
	return app.RunContext(c.Context, append([]string{c.App.Name, "customize"}, args...))
}

// writeCustomizedInitramfs writes the initramfs of the node that nc's node options describe,
// made from the stock initramfs, to out.
func writeCustomizedInitramfs(nc *cli.Context, initramfs, out string) error {
	n, files, err := node.Load(nodeInputsFromFlags(nc))
	if err != nil {
		return err
	}
	f, info, err := input.OpenRegular(initramfs, "an initramfs")
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := n.InitramfsImage(f, info.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", initramfs, err)
	}
	printWarnings(nc, n.Warnings)
	if err := writeResult(nc, img, initramfs, out, append(commandInputs(nc, initramfs), files...)); err != nil {
		return err
	}
	fmt.Fprintln(nc.App.ErrWriter, "PXE configuration must include kernel arguments:\n\tignition.firstboot ignition.platform.id=metal")
	return nil
}

// requireLiveIgnition refuses a customize without --live-ignition: single-node media are
// made from the bootstrap-in-place config.
func requireLiveIgnition(c *cli.Context) error {
	if !c.IsSet("live-ignition") {
		return usagef("sno-iso's customize makes single-node media: give the bootstrap-in-place config\n" +
			"(openshift-install create single-node-ignition-config) with --live-ignition")
	}
	return nil
}

// customizeNodeArgs maps the options of coreos-installer's customize to build's node options:
// the bootstrap-in-place config among --live-ignition, then the install settings of the
// installer configs and of the command line (which come last, as coreos-installer writes
// them last: its scalars win, its lists append).
func customizeNodeArgs(c *cli.Context) ([]string, error) {
	bip, fragments, err := node.SplitLiveIgnitions(c.StringSlice("live-ignition"))
	if errors.Is(err, node.ErrNoBootstrapInPlaceConfig) {
		return nil, usagef("%v: sno-iso's customize makes single-node media from the bootstrap-in-place config "+
			"(openshift-install create single-node-ignition-config); give it with --live-ignition", err)
	}
	if err != nil {
		return nil, err
	}
	settings := coreos.InstallerConfig{}
	for _, p := range c.StringSlice("installer-config") {
		data, err := input.ReadFile(p, maxInstallerConfigSize, "a coreos-installer install config")
		if err != nil {
			return nil, err
		}
		cfg, err := coreos.ParseInstallerConfig(p, data)
		if err != nil {
			return nil, err
		}
		settings = settings.Then(cfg)
	}
	settings = settings.Then(&coreos.InstallerConfig{DestDevice: c.String("dest-device"),
		AppendKargs: c.StringSlice("dest-karg-append"), DeleteKargs: c.StringSlice("dest-karg-delete"),
		Consoles: c.StringSlice("dest-console")})

	if settings.DestDevice == "" {
		return nil, usagef("sno-iso's customize makes media that install the node: give the installation disk with --dest-device PATH " +
			"(or dest-device in an --installer-config file)")
	}
	args := []string{"--ignition=" + bip}
	add := func(name string, values ...string) {
		for _, v := range values {
			args = append(args, "--"+name+"="+v)
		}
	}
	add("live-ignition", fragments...)
	add("installation-disk", settings.DestDevice)
	add("customize", c.StringSlice("dest-ignition")...)
	add("append-karg", settings.AppendKargs...)
	for _, console := range settings.Consoles {
		add("append-karg", "console="+console)
	}
	add("delete-karg", settings.DeleteKargs...)
	// coreos-installer copies the network it was given to the installed system, whatever the
	// install configs say; sno-iso's node options do the same without --copy-network.
	if settings.CopyNetwork != nil && !c.IsSet("network-keyfile") && !c.IsSet("network-nmstate") {
		add("copy-network", fmt.Sprint(*settings.CopyNetwork))
	}
	for _, name := range []string{"network-keyfile", "network-nmstate", "ignition-ca", "pre-install", "post-install"} {
		add(name, c.StringSlice(name)...)
	}
	return args, nil
}

// maxInstallerConfigSize bounds a coreos-installer install config; real ones are a few lines.
const maxInstallerConfigSize = 1 << 20
