package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
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
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "iso", Usage: "the RHCOS live `ISO`", Required: true},
			&cli.StringFlag{Name: "ignition", Usage: "the bootstrap-in-place Ignition `FILE`", Required: true},
			&cli.StringFlag{Name: "config", Usage: "sno.yaml `FILE` with the coreOSInstallation settings"},
			&cli.StringFlag{Name: "install-config", Usage: "take bootstrapInPlace.installationDisk from this install-config.yaml `FILE`"},
			&cli.StringFlag{Name: "installation-disk", Usage: "install to `DEVICE` (prefer /dev/disk/by-id or by-path names)"},
			&cli.BoolFlag{Name: "copy-network", Usage: "copy the live system's NetworkManager keyfiles to the installed node"},
			&cli.StringSliceFlag{Name: "append-karg", Usage: "kernel argument `KARG` for the installed node (repeatable)"},
			&cli.StringSliceFlag{Name: "delete-karg", Usage: "kernel argument `KARG` to remove on the installed node (repeatable)"},
			&cli.BoolFlag{Name: "wipe-disk", Usage: "release LVM, md and device-mapper holders and wipe signatures on the disk before installing"},
			&cli.DurationFlag{Name: "reboot-delay", Usage: "wait `DURATION` (whole minutes) after installing before rebooting"},
			&cli.BoolFlag{Name: "allow-any-ignition", Usage: "embed a config that is not bootstrap-in-place, unchanged"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (- for standard output; default sno-<volume id>.iso)"},
			forceFlag("replace an existing output file"),
		},
		Action: build,
	}
}

// installationFromFlags collects what the command line says about the installation; flags
// left unset keep the configuration files' values.
func installationFromFlags(c *cli.Context) coreos.InstallationFlags {
	var f coreos.InstallationFlags
	f.Disk = c.String("installation-disk")
	if c.IsSet("copy-network") {
		v := c.Bool("copy-network")
		f.CopyNetwork = &v
	}
	if c.IsSet("append-karg") {
		f.AppendKargs = c.StringSlice("append-karg")
	}
	if c.IsSet("delete-karg") {
		f.DeleteKargs = c.StringSlice("delete-karg")
	}
	if c.IsSet("wipe-disk") {
		v := c.Bool("wipe-disk")
		f.WipeDisk = &v
	}
	if c.IsSet("reboot-delay") {
		v := c.Duration("reboot-delay")
		f.RebootDelay = &v
	}
	return f
}

// loadInstallation merges sno.yaml, install-config.yaml and the flags, in rising precedence.
func loadInstallation(c *cli.Context) (coreos.Installation, error) {
	var inst coreos.Installation
	if path := c.String("config"); path != "" {
		cfg, err := coreos.LoadConfig(path)
		if err != nil {
			return inst, err
		}
		inst = cfg.Installation
	}
	if path := c.String("install-config"); path != "" {
		fromInstallConfig, err := coreos.LoadInstallConfig(path)
		if err != nil {
			return inst, err
		}
		switch {
		case inst.Disk == "":
			inst.Disk = fromInstallConfig.Disk
		case inst.Disk != fromInstallConfig.Disk:
			return inst, fmt.Errorf("%s says installationDisk %s but %s says %s; keep one of them", c.String("config"), inst.Disk, path, fromInstallConfig.Disk)
		}
	}
	return installationFromFlags(c).Override(inst), nil
}

func build(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("build takes no arguments, got %q; the ISO goes in --iso", c.Args().Slice())
	}
	inst, err := loadInstallation(c)
	if err != nil {
		return err
	}
	isoPath := c.String("iso")
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	ignPath := c.String("ignition")
	raw, err := os.ReadFile(ignPath)
	if err != nil {
		return err
	}
	live, warnings, err := coreos.PrepareLiveIgnition(raw, coreos.LiveIgnitionOptions{
		Installation: inst, AllowAnyIgnition: c.Bool("allow-any-ignition"),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", ignPath, err)
	}
	existing, err := iso.Payload()
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("%s already carries embedded files (%v); start from the pristine RHCOS live ISO, or empty it with `sno-iso ignition remove`", isoPath, existing.Paths())
	}
	patch, err := iso.PayloadPatch(initrd.Files{initrd.IgnitionPath: live})
	var tooLarge *isobuilder.TooLargeError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("the bootstrap-in-place config does not fit the ISO: %w; make it smaller: drop manifests you can apply after the install, or fetch large files from a URL in the Ignition config", err)
	}
	if err != nil {
		return err
	}
	img, err := iso.Image(patch)
	if err != nil {
		return err
	}
	// Everything is validated: warnings now, so that errors come alone.
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", ignPath, w)
	}
	out := c.String("output")
	if out == "" {
		out = "sno-" + iso.Volume.VolumeID + ".iso"
	}
	if err := writeResult(c, img, isoPath, out); err != nil || out == "-" {
		return err
	}
	abs, _ := filepath.Abs(out)
	if inst.Disk != "" {
		fmt.Fprintf(c.App.ErrWriter, "Wrote %s: boots the live system, runs bootkube, installs to %s and reboots.\n", abs, inst.Disk)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "Wrote %s\n", abs)
	}
	return nil
}
