package main

import (
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
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editISO(c, isoPath, (*isobuilder.LiveISO).Reset)
}
