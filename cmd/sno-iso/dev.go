package main

import (
	"fmt"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// devCommand groups hidden helpers for building and debugging media.
func devCommand() *cli.Command {
	return &cli.Command{
		Name:   "dev",
		Usage:  "helpers for building test media",
		Hidden: true,
		Subcommands: []*cli.Command{
			{
				Name:      "pack-minimal-iso",
				Usage:     "record in FULL's coreos/miniso.dat how to rebuild MINIMAL from it (done at image build time)",
				ArgsUsage: "FULL MINIMAL",
				Action:    packMinimalISO,
			},
			docsCommand(),
		},
	}
}

func packMinimalISO(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("dev pack-minimal-iso takes FULL and MINIMAL")
	}
	fullPath, minimalPath := c.Args().Get(0), c.Args().Get(1)
	full, err := isobuilder.OpenForEdit(c.Context, fullPath, inPlaceLockWait)
	if err != nil {
		return err
	}
	defer full.Close()
	minimal, minimalSize, err := isobuilder.OpenFile(minimalPath)
	if err != nil {
		return err
	}
	defer minimal.Close()
	off, length, err := full.Locate("COREOS/MINISO.DAT")
	if err != nil {
		return fmt.Errorf("%s has no coreos/miniso.dat placeholder to fill: %w", fullPath, err)
	}
	data, err := isobuilder.PackMinimal(full, full.Size(), minimal, minimalSize, version())
	if err != nil {
		return err
	}
	if int64(len(data)) > length {
		return fmt.Errorf("miniso.dat data (%d bytes) does not fit the %d-byte placeholder", len(data), length)
	}
	area := make([]byte, length)
	copy(area, data)
	img, err := full.Image(isobuilder.Patch{Offset: off, Data: area})
	if err != nil {
		return err
	}
	if err := isobuilder.WriteInPlace(c.Context, img, fullPath); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "Packed %d bytes of miniso.dat into %s, verified by rebuilding %s\n", len(data), fullPath, minimalPath)
	return nil
}
