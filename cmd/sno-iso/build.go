package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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
		Flags: append(append(liveISOFlags("the RHCOS live `ISO`"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (- for standard output; default sno-<volume id>.iso)"},
			forceFlag("replace an existing output file"),
			&cli.BoolFlag{Name: "minimal", Usage: "make a minimal ISO, without the root file system (see sno-iso minimal)"},
			&cli.StringFlag{Name: "rootfs-url", Usage: "with --minimal: the live system fetches its root file system from `URL`"},
			&cli.BoolFlag{Name: "grow-embed-area", Usage: "when the config does not fit the 256 KiB Ignition area, rebuild the ISO with a larger one"},
		), nodeFlags()...),
		Action: withLiveISO(build),
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
	minimal, opts, err := minimalChoice(c, node)
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" {
		out = "sno-" + iso.Volume.VolumeID + ".iso"
		if minimal {
			out = "sno-" + iso.Volume.VolumeID + "-minimal.iso"
		}
	}
	if out != "-" {
		if err := refuseExisting(out, c.Bool("force")); err != nil {
			return err
		}
	}
	// A minimal or grown ISO is written to a temporary file first, then customized like the
	// input ISO would be.
	var media *isobuilder.DerivedISO
	defer func() {
		if media != nil {
			media.Close()
		}
	}()
	base := iso
	if minimal {
		if media, err = minimalMedia(c.Context, iso, tempDirFor(out), opts); err != nil {
			return fmt.Errorf("%s: %w", isoPath, err)
		}
		base = media.LiveISO
	}
	img, err := node.image(base, isoPath)
	var tooLarge *isobuilder.TooLargeError
	if errors.As(err, &tooLarge) && c.Bool("grow-embed-area") {
		grown, rerr := iso.Rebuild(c.Context, tempDirFor(out), isobuilder.RebuildOptions{
			Minimal: minimal, MinimalOptions: opts, IgnitionAreaSize: grownAreaSize(tooLarge.Compressed)})
		if rerr != nil {
			return fmt.Errorf("%s: growing the Ignition area: %w", isoPath, rerr)
		}
		if media != nil {
			media.Close()
		}
		media = grown
		img, err = node.image(media.LiveISO, isoPath)
	}
	if err != nil {
		return err
	}
	if minimal {
		node.Warnings = append(node.Warnings, minimalNetworkWarning(media.LiveISO, node)...)
	}
	// Everything is validated: warnings now, so that errors come alone.
	for _, w := range node.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s\n", w)
	}
	if media != nil {
		err = writeDerived(c, media, img, out)
	} else {
		err = writeResult(c, img, isoPath, out)
	}
	if err != nil || out == "-" {
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

// minimalChoice merges sno.yaml's output section and the flags.
func minimalChoice(c *cli.Context, node *preparedNode) (bool, isobuilder.MinimalOptions, error) {
	minimal, url := node.Output.Kind == "minimal", node.Output.RootfsURL
	if c.IsSet("minimal") {
		minimal = c.Bool("minimal")
	}
	if c.IsSet("rootfs-url") {
		url = c.String("rootfs-url")
	}
	if url != "" && !minimal {
		return false, isobuilder.MinimalOptions{}, usagef("--rootfs-url is for minimal ISOs: add --minimal")
	}
	if url != "" {
		if err := isobuilder.CheckRootfsURL(url); err != nil {
			return false, isobuilder.MinimalOptions{}, err
		}
	}
	return minimal, isobuilder.MinimalOptions{RootfsURL: url}, nil
}

// grownAreaSize leaves as much free room as the payload takes, in 256 KiB steps, so the area
// stays editable (by sno-iso or coreos-installer) with a config that grows later.
func grownAreaSize(compressed int64) int64 {
	const step = 256 << 10
	return (2*compressed + step - 1) / step * step
}

// minimalNetworkWarning warns when the initramfs of a minimal ISO has no configured way to
// reach the rootfs URL: it fetches the root file system before Ignition runs.
func minimalNetworkWarning(media *isobuilder.LiveISO, node *preparedNode) []string {
	if len(networkFiles(node.Payload)) > 0 {
		return nil
	}
	current, _ := media.CurrentKargs()
	if hasIPKarg(current) || hasIPKarg(strings.Join(node.LiveKargs.Append, " ")) {
		return nil
	}
	return []string{"the minimal ISO fetches its root file system over the network from the initramfs, before Ignition runs; " +
		"with no ip= live kernel argument and no network keyfile it relies on DHCP: add liveKargs (ip=...) or network keyfiles for a static address"}
}
