package main

import (
	"fmt"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func kargsCommand() *cli.Command {
	return &cli.Command{
		Name:  "kargs",
		Usage: "show, modify or reset the live kernel arguments of an ISO",
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print the kernel arguments the live system boots with",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "default", Aliases: []string{"d"}, Usage: "print the ISO's default kernel arguments instead"},
				},
				Action: kargsShow,
			},
			{
				Name:  "modify",
				Usage: "delete, append and replace kernel arguments in every bootloader's command line",
				Description: "Deletes run first, then appends, then replaces, whatever the order on the command line.\n" +
					"A delete removes each whole argument (or space-separated sequence) equal to KARG.",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "append", Aliases: []string{"a"}, Usage: "append `KARG` (repeatable)"},
					&cli.StringSliceFlag{Name: "delete", Aliases: []string{"d"}, Usage: "delete `KARG` (repeatable)"},
					&cli.StringSliceFlag{Name: "replace", Aliases: []string{"r"},
						Usage: "replace KEY=OLD by KEY=NEW, given as `KEY=OLD=NEW` (repeatable)"},
					outputFlag(),
					forceFlag("replace an existing output file"),
				},
				Action: kargsModify,
			},
			{
				Name:      "reset",
				Usage:     "put the ISO's default kernel arguments back",
				ArgsUsage: "ISO",
				Flags:     []cli.Flag{outputFlag(), forceFlag("replace an existing output file")},
				Action:    kargsReset,
			},
		},
	}
}

func kargsShow(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	if iso.Kargs() == nil {
		return fmt.Errorf("%s: %w", isoPath, isobuilder.ErrNoKargs)
	}
	kargs := iso.Kargs().Default
	if !c.Bool("default") {
		if kargs, err = iso.CurrentKargs(); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(c.App.Writer, kargs)
	return err
}

func kargsModify(c *cli.Context) error {
	if len(c.StringSlice("append"))+len(c.StringSlice("delete"))+len(c.StringSlice("replace")) == 0 {
		return usagef("kargs modify needs at least one -a KARG, -d KARG or -r KEY=OLD=NEW")
	}
	return modifyKargs(c)
}

// modifyKargs applies -a, -d and -r; coreos-installer's spelling accepts none of them.
func modifyKargs(c *cli.Context) error {
	appends, deletes, replaces := c.StringSlice("append"), c.StringSlice("delete"), c.StringSlice("replace")
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editISO(c, isoPath, func(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
		return iso.ModifyKargs(appends, deletes, replaces)
	})
}

func kargsReset(c *cli.Context) error {
	isoPath, err := isoArg(c)
	if err != nil {
		return err
	}
	return editISO(c, isoPath, (*isobuilder.LiveISO).ResetKargs)
}
