package main

import (
	"fmt"
	"path/filepath"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:  "build",
		Usage: "make single-node boot media: embed the bootstrap-in-place Ignition with install-to-disk set",
		Description: "Reads the bootstrap-in-place-for-live-iso.ign that `openshift-install create single-node-ignition-config`\n" +
			"wrote, sets its install-to-disk unit and script from sno.yaml (or install-config.yaml's\n" +
			"bootstrapInPlace) and the flags, and writes a copy of the live ISO that boots, installs the node\n" +
			"to the disk and reboots into it.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "iso", Usage: "the RHCOS live `ISO`", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (- for standard output; default sno-<volume id>.iso)"},
			forceFlag("replace an existing output file"),
		}, nodeFlags()...),
		Action: build,
	}
}

func build(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("build takes no arguments, got %q; the ISO goes in --iso", c.Args().Slice())
	}
	isoPath := c.String("iso")
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	node, err := nodeInputsFromFlags(c).prepare()
	if err != nil {
		return err
	}
	img, err := node.image(iso, isoPath)
	if err != nil {
		return err
	}
	// Everything is validated: warnings now, so that errors come alone.
	for _, w := range node.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s\n", w)
	}
	out := c.String("output")
	if out == "" {
		out = "sno-" + iso.Volume.VolumeID + ".iso"
	}
	if err := writeResult(c, img, isoPath, out); err != nil || out == "-" {
		return err
	}
	abs, _ := filepath.Abs(out)
	if disk := node.Installation.Disk; disk != "" {
		fmt.Fprintf(c.App.ErrWriter, "Wrote %s: boots the live system, runs bootkube, installs to %s and reboots.\n", abs, disk)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "Wrote %s\n", abs)
	}
	return nil
}
