package main

import (
	"github.com/urfave/cli/v2"
)

// customizeToBuild maps the options of coreos-installer's iso customize that sno-iso's build
// has to build's names; the slices repeat, as they do in coreos-installer.
var customizeToBuild = []struct{ from, to string }{
	{"live-ignition", "ignition"},
	{"dest-device", "installation-disk"},
	{"dest-ignition", "customize"},
	{"dest-karg-append", "append-karg"},
	{"dest-karg-delete", "delete-karg"},
	{"network-keyfile", "network-keyfile"},
	{"network-nmstate", "network-nmstate"},
	{"live-karg-append", "live-karg-append"},
	{"live-karg-delete", "live-karg-delete"},
	{"live-karg-replace", "live-karg-replace"},
	{"output", "output"},
}

// customizeNotProvided are iso customize's options that sno-iso's build has no equivalent of.
var customizeNotProvided = []string{"ignition-ca", "pre-install", "post-install", "installer-config", "force"}

// dropInISOCustomizeCommand is coreos-installer's iso customize for single-node media: it runs
// sno-iso build with the same inputs, so the install it starts is build's install-to-disk
// unit and the ISO is byte for byte build's.
func dropInISOCustomizeCommand() *cli.Command {
	slice := func(name, usage string) cli.Flag { return &cli.StringSliceFlag{Name: name, Usage: usage} }
	str := func(name, usage string) cli.Flag { return &cli.StringFlag{Name: name, Usage: usage} }
	return &cli.Command{
		Name: "customize", Usage: "Customize a CoreOS live ISO image (single node: sno-iso build)", ArgsUsage: "ISO",
		Flags: []cli.Flag{
			str("dest-device", "Install destination device `path`"),
			slice("dest-ignition", "Ignition config fragment `path` for the installed node (sno-iso build --customize)"),
			slice("dest-console", "Kernel and bootloader console `spec` for the installed node"),
			slice("dest-karg-append", "Destination kernel argument `arg` to append"),
			slice("dest-karg-delete", "Destination kernel argument `arg` to delete"),
			slice("network-keyfile", "NetworkManager keyfile `path` for the live and installed systems"),
			slice("network-nmstate", "NMState config `path` for the live and installed systems"),
			slice("live-ignition", "The bootstrap-in-place Ignition config `path` (sno-iso build --ignition)"),
			slice("live-karg-append", "Live kernel argument `arg` to append"),
			slice("live-karg-delete", "Live kernel argument `arg` to delete"),
			slice("live-karg-replace", "Live kernel argument to replace, `KEY=OLD=NEW`"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Write ISO to a new output `path` (- for stdout)"},
			slice("ignition-ca", "Not provided (`path`): sno-iso build --report-ca serves its report URL only"),
			slice("pre-install", "Not provided (`path`): use sno-iso build --customize for the installed node"),
			slice("post-install", "Not provided (`path`): use sno-iso build --customize for the installed node"),
			slice("installer-config", "Not provided (`path`): give the install settings in sno.yaml (build --config)"),
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "Not provided: customize a pristine ISO (sno-iso reset)"},
		},
		Action: dropInISOCustomize,
	}
}

func dropInISOCustomize(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	for _, name := range customizeNotProvided {
		if c.IsSet(name) {
			return usagef("--%s is not provided by sno-iso's iso customize, which makes single-node media as sno-iso build does; "+
				"run coreos-installer itself for it (see sno-iso build --help for what build takes)", name)
		}
	}
	switch n := len(c.StringSlice("live-ignition")); {
	case n == 0:
		return usagef("sno-iso's iso customize makes single-node media: give the bootstrap-in-place config " +
			"(openshift-install create single-node-ignition-config) with --live-ignition")
	case n > 1:
		return usagef("--live-ignition given %d times: sno-iso takes the one bootstrap-in-place config; "+
			"give the installed node's fragments with --dest-ignition", n)
	}
	if !c.IsSet("output") {
		return usagef("sno-iso's iso customize writes a new ISO: give -o OUTPUT (or -o - for standard output)")
	}
	args := []string{c.App.Name, "build", "--iso", isoPath}
	for _, m := range customizeToBuild {
		if !c.IsSet(m.from) {
			continue
		}
		values := []string{c.String(m.from)}
		if _, repeats := findFlag(c.Command.Flags, m.from).(*cli.StringSliceFlag); repeats {
			values = c.StringSlice(m.from)
		}
		for _, v := range values {
			args = append(args, "--"+m.to+"="+v)
		}
	}
	for _, console := range c.StringSlice("dest-console") {
		args = append(args, "--append-karg=console="+console)
	}
	app := newApp(c.App.Reader, c.App.Writer, c.App.ErrWriter)
	app.Name = c.App.Name
	return app.RunContext(c.Context, args)
}
