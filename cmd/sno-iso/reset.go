package main

import (
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func resetCommand() *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "undo every customization: empty the Ignition area and restore the default kernel arguments",
		ArgsUsage: "ISO",
		Flags:     []cli.Flag{outputFlag(), forceFlag("replace an existing output file")},
		Action:    reset,
	}
}

func reset(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	// Neither step reads what is there now, so reset also cures an undecodable payload or
	// karg areas that disagree.
	empty, err := iso.PayloadPatch(initrd.Files{})
	if err != nil {
		return err
	}
	patches := []isobuilder.Patch{empty}
	if iso.Kargs() != nil {
		kargs, err := iso.KargsPatches(iso.Kargs().Default)
		if err != nil {
			return err
		}
		patches = append(patches, kargs...)
	}
	img, err := iso.Image(patches...)
	if err != nil {
		return err
	}
	return writeResult(c, img, isoPath, c.String("output"))
}
