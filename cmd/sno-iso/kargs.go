package main

import (
	"fmt"

	"github.com/sno-iso/sno-iso/embed"
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
					&cli.StringSliceFlag{Name: "replace", Aliases: []string{"r"}, Usage: "replace KEY=OLD by KEY=NEW, given as `KEY=OLD=NEW` (repeatable)"},
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

// openWithKargs opens the ISO argument and checks that it has kernel-argument areas.
func openWithKargs(c *cli.Context) (*isobuilder.LiveISO, string, error) {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return nil, "", err
	}
	if iso.Kargs() == nil {
		iso.Close()
		return nil, "", noKargsError(isoPath)
	}
	return iso, isoPath, nil
}

func noKargsError(isoPath string) error {
	return fmt.Errorf("%s: %w", isoPath, embed.ErrNoKargs)
}

func kargsShow(c *cli.Context) error {
	iso, _, err := openWithKargs(c)
	if err != nil {
		return err
	}
	defer iso.Close()
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
	appends, deletes, replaces := c.StringSlice("append"), c.StringSlice("delete"), c.StringSlice("replace")
	if len(appends)+len(deletes)+len(replaces) == 0 {
		return usagef("kargs modify needs at least one -a KARG, -d KARG or -r KEY=OLD=NEW")
	}
	iso, isoPath, err := openWithKargs(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	current, err := iso.CurrentKargs()
	if err != nil {
		return err
	}
	kargs, err := embed.ModifyKargs(current, appends, deletes, replaces)
	if err != nil {
		return err
	}
	return writeKargs(c, iso, isoPath, kargs)
}

func kargsReset(c *cli.Context) error {
	// Reset does not read the current kargs: it is the cure for areas that disagree.
	iso, isoPath, err := openWithKargs(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	return writeKargs(c, iso, isoPath, iso.Kargs().Default)
}

// writeKargs rewrites every karg area of iso with kargs and writes the result as asked.
func writeKargs(c *cli.Context, iso *isobuilder.LiveISO, isoPath, kargs string) error {
	patches, err := iso.KargsPatches(kargs)
	if err != nil {
		return err
	}
	img, err := iso.Image(patches...)
	if err != nil {
		return err
	}
	return writeResult(c, img, isoPath, c.String("output"))
}
