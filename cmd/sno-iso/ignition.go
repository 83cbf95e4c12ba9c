package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
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
	name := c.String("ignition-file")
	if name == "" {
		name = "standard input"
	}
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

func ignitionEmbed(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	cfg, err := readIgnitionInput(c)
	if err != nil {
		return err
	}
	return editPayload(c, isoPath, func(files initrd.Files) error {
		if _, ok := files[initrd.IgnitionPath]; ok && !c.Bool("force") {
			return errors.New("this ISO already has an embedded Ignition config; use -f to replace it")
		}
		files[initrd.IgnitionPath] = cfg
		return nil
	})
}

func ignitionRemove(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editPayload(c, isoPath, func(files initrd.Files) error {
		delete(files, initrd.IgnitionPath)
		return nil
	})
}

func ignitionShow(c *cli.Context) error {
	iso, _, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	files, err := iso.Payload()
	if err != nil {
		return err
	}
	cfg, ok := files[initrd.IgnitionPath]
	if !ok {
		return errors.New("no embedded Ignition config")
	}
	_, err = c.App.Writer.Write(cfg)
	return err
}

// editPayload reads the ISO's embedded payload, lets edit change it, and writes the result
// as the command line asks. Nothing is written when edit or packing fails.
func editPayload(c *cli.Context, isoPath string, edit func(initrd.Files) error) error {
	iso, err := openISO(c, isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	files, err := iso.Payload()
	if err != nil {
		return err
	}
	if err := edit(files); err != nil {
		return err
	}
	patch, err := iso.PayloadPatch(files)
	var tooLarge *isobuilder.TooLargeError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("%w; make the config smaller (fetch large files from a URL with a verification hash), or boot over PXE, where the initramfs has no such limit", err)
	}
	if err != nil {
		return err
	}
	img, err := iso.Image(patch)
	if err != nil {
		return err
	}
	return writeResult(c, img, isoPath, c.String("output"))
}
