package main

import (
	"bufio"
	"fmt"

	"github.com/sno-iso/sno-iso/internal/safetext"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func networkCommand() *cli.Command {
	return &cli.Command{
		Name:  "network",
		Usage: "embed, extract or remove the NetworkManager keyfiles the live system starts with",
		Subcommands: []*cli.Command{
			{
				Name: "embed",
				Usage: "embed NetworkManager keyfiles (static addresses, bonds, VLANs) for the live system; " +
					"the embedded Ignition config is kept",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "keyfile", Aliases: []string{"k"}, Usage: "NetworkManager keyfile `FILE` (repeatable)"},
					&cli.StringSliceFlag{Name: "network-nmstate", Aliases: []string{"nmstate"},
						Usage: "NMState `FILE`, converted to keyfiles (repeatable)"},
					outputFlag(),
					forceFlag("replace embedded network settings and an existing output file"),
				},
				Action: networkEmbed,
			},
			networkGCCommand(),
			{
				Name:      "extract",
				Usage:     "print the embedded keyfiles, or write them to a directory",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Usage: "write the keyfiles into `DIR` (created if needed; existing " +
						"files are not replaced)"},
				},
				Action: networkExtract,
			},
			{
				Name:      "remove",
				Usage:     "remove the embedded keyfiles, keeping the embedded Ignition config",
				ArgsUsage: "ISO",
				Flags:     []cli.Flag{outputFlag(), forceFlag("replace an existing output file")},
				Action:    networkRemove,
			},
		},
	}
}

// networkSupportError is err, which wraps isobuilder.ErrNoNetworkSupport, with the ISO's name
// and what to do.
func networkSupportError(isoPath string, err error) error {
	return fmt.Errorf("%s: %w; use a newer ISO, or give static addresses as ip= live kernel arguments (liveKargs in sno.yaml, or `sno-iso "+
		"kargs modify -a`)",
		isoPath, err)
}

func networkEmbed(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	if len(c.StringSlice("keyfile"))+len(c.StringSlice("network-nmstate")) == 0 {
		return usagef("give the network settings to embed: --keyfile FILE or --network-nmstate FILE")
	}
	keyfiles, _, err := node.NetworkKeyfiles(c.StringSlice("keyfile"), c.StringSlice("network-nmstate"), nil)
	if err != nil {
		return err
	}
	return embedSecrets(c, isoPath, "the network keyfiles and any password in them", func() error {
		return editISO(c, isoPath, func(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
			return iso.EmbedKeyfiles(keyfiles, c.Bool("force"))
		})
	})
}

func networkRemove(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editISO(c, isoPath, (*isobuilder.LiveISO).RemoveKeyfiles)
}

func networkExtract(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	keyfiles, err := iso.EmbeddedKeyfiles()
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	if dir := c.String("directory"); dir != "" {
		written, err := isobuilder.ExtractFiles(keyfiles, dir)
		if err != nil {
			return err
		}
		printWritten(c, dir, written)
		return nil
	}
	w := bufio.NewWriter(c.App.Writer)
	for i, name := range keyfiles.Paths() {
		if i > 0 {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "########## %s ##########\n", safetext.Escape(name))
		w.Write(keyfiles[name])
	}
	return w.Flush()
}
