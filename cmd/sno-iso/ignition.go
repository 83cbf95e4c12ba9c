package main

import (
	"fmt"
	"os"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func ignitionCommand() *cli.Command {
	return &cli.Command{
		Name:  "ignition",
		Usage: "embed, show or remove the live Ignition config of an ISO",
		Subcommands: []*cli.Command{
			{
				Name:      "embed",
				Usage:     "embed an Ignition config into the ISO's Ignition area",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "ignition-file", Aliases: []string{"i"}, Usage: "read the config from `FILE` (default: standard input)"},
					outputFlag(),
					forceFlag("replace an existing embedded config and an existing output file"),
				},
				Action: ignitionEmbed,
			},
			{
				Name:      "show",
				Usage:     "print the embedded Ignition config exactly as stored",
				ArgsUsage: "ISO",
				Action:    ignitionShow,
			},
			{
				Name:      "remove",
				Usage:     "remove the embedded Ignition config, keeping embedded network keyfiles",
				ArgsUsage: "ISO",
				Flags:     []cli.Flag{outputFlag(), forceFlag("replace an existing output file")},
				Action:    ignitionRemove,
			},
		},
	}
}

// readIgnitionBytes reads the config named by -i, or standard input, bounded but unvalidated.
func readIgnitionBytes(c *cli.Context) ([]byte, error) {
	if name := c.String("ignition-file"); name != "" {
		return input.ReadFile(name, coreos.MaxIgnitionSize, "an Ignition config")
	}
	if stdin, ok := c.App.Reader.(*os.File); ok && isTerminal(stdin) {
		return nil, usagef("no Ignition config given: pass -i FILE or pipe the config to standard input")
	}
	return input.Read(c.App.Reader, "standard input", coreos.MaxIgnitionSize, "an Ignition config")
}

// readIgnitionInput reads the config named by -i, or standard input, and validates it.
func readIgnitionInput(c *cli.Context) ([]byte, error) {
	raw, err := readIgnitionBytes(c)
	if err != nil {
		return nil, err
	}
	name := ignitionSourceName(c)
	// The live system's Ignition rejects an invalid config at boot, long after the media was
	// written: say so now, checking it against its own spec version.
	_, warnings, err := coreos.ParseIgnition(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid Ignition config: %w", name, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", name, w)
	}
	return raw, nil
}

// ignitionSourceName names where the config of -i comes from, for messages.
func ignitionSourceName(c *cli.Context) string {
	if name := c.String("ignition-file"); name != "" {
		return name
	}
	return "standard input"
}

func ignitionEmbed(c *cli.Context) error { return embedIgnitionFrom(c, readIgnitionInput) }

// embedIgnitionFrom embeds the config that read returns: validated for sno-iso, as is for
// coreos-installer's spelling.
func embedIgnitionFrom(c *cli.Context, read func(*cli.Context) ([]byte, error)) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	cfg, err := read(c)
	if err != nil {
		return err
	}
	return embedSecrets(c, isoPath, "the Ignition config and the keys it carries", func() error {
		return editISO(c, isoPath, func(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
			return iso.EmbedIgnition(cfg, c.Bool("force"))
		})
	})
}

func ignitionRemove(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editISO(c, isoPath, (*isobuilder.LiveISO).RemoveIgnition)
}

func ignitionShow(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	cfg, err := iso.EmbeddedIgnition()
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	_, err = c.App.Writer.Write(cfg)
	return err
}
