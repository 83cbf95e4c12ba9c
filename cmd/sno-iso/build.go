package main

import (
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:  "build",
		Usage: "make single-node boot media: embed the bootstrap-in-place Ignition with install-to-disk set",
		Description: "Reads the bootstrap-in-place-for-live-iso.ign that\n" +
			"`openshift-install create single-node-ignition-config` wrote, sets its install-to-disk unit and\n" +
			"script from sno.yaml (or install-config.yaml's bootstrapInPlace) and the flags, and writes a copy\n" +
			"of the live ISO that boots, installs the node to the disk and reboots into it.",
		Flags: append(append(liveISOFlags("the RHCOS live `ISO`: a path, or an http(s) or s3://BUCKET/KEY URL"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (- for standard output; default sno-<volume id>.iso)"},
			forceFlag("replace an existing output file"),
			&cli.BoolFlag{Name: "minimal", Usage: "make a minimal ISO, without the root file system (see sno-iso minimal)",
				DefaultText: "true when sno.yaml's output.kind is minimal"},
			&cli.StringFlag{Name: "rootfs-url", Usage: "with --minimal: the live system fetches its root file system from `URL`",
				DefaultText: "sno.yaml's output.rootfsURL"},
			growEmbedAreaFlag(),
			&cli.BoolFlag{Name: "overwrite-customization", Usage: "customize an ISO that is already customized from its pristine state " +
				"(its embedded files and kernel arguments replaced), as coreos-installer iso customize --force does"},
		), nodeFlags()...),
		Before: checkNodeFlags,
		Action: withLiveISO(build),
	}
}

func build(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("build takes no arguments, got %q; the ISO goes in --iso", c.Args().Slice())
	}
	if err := refuseDeviceOutput(c.String("output"), "-o -"); err != nil {
		return err
	}
	if c.IsSet("rootfs-url") {
		if err := checkRootfsURLFlag(c, c.String("rootfs-url")); err != nil {
			return err
		}
	}
	iso, isoPath, n, inputs, err := openNode(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	minimal, opts, err := minimalChoice(c, n)
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" {
		out = "sno-" + iso.Volume().VolumeID + ".iso"
		if minimal {
			out = "sno-" + iso.Volume().VolumeID + "-minimal.iso"
		}
	}
	if out != "-" {
		if err := refuseExisting(out, c.Bool("force"), inputs); err != nil {
			return forceAdvice(err)
		}
	}
	// A minimal or grown ISO is written to a temporary file first, then customized like the
	// input ISO would be.
	media, err := n.Media(c.Context, iso, node.MediaOptions{
		Minimal: minimal, MinimalOptions: opts, GrowEmbedArea: c.Bool("grow-embed-area"), TempDir: tempDirFor(out),
		OverwriteCustomization: c.Bool("overwrite-customization")})
	if err != nil {
		return nodeError(err, isoPath)
	}
	if media.Derived != nil {
		defer media.Derived.Close()
	}
	// Everything is validated: warnings now, so that errors come alone.
	printWarnings(c, append(n.Warnings, media.Warnings...))
	o, done, err := outputFor(c, media.Image.Size(), isoPath, out, inputs)
	if err != nil {
		return err
	}
	err = media.Write(c.Context, o)
	done()
	if err != nil || out == "-" {
		return existsAdvice(c, err)
	}
	if out == "" {
		out = isoPath
	}
	if minimal && opts.RootfsURL == "" {
		sayWrote(c, out, ", a minimal ISO without a rootfs URL"+rootfsNote("")+".")
	} else if disk := n.Installation.Disk; disk != "" {
		sayWrote(c, out, ": boots the live system, runs bootkube, installs to "+disk+" and reboots.")
	} else {
		sayWrote(c, out, "")
	}
	return nil
}

// growEmbedAreaFlag is build's and serve's choice to rebuild an ISO whose Ignition area is
// too small for the node.
func growEmbedAreaFlag() cli.Flag {
	return &cli.BoolFlag{Name: "grow-embed-area", Usage: "when the config does not fit the 256 KiB Ignition area, " +
		"rebuild the ISO with a larger one"}
}

// minimalChoice merges sno.yaml's output section and the flags, both already validated.
func minimalChoice(c *cli.Context, n *node.Node) (bool, isobuilder.MinimalOptions, error) {
	minimal, url := n.Output.Kind == "minimal", n.Output.RootfsURL
	if c.IsSet("minimal") {
		minimal = c.Bool("minimal")
	}
	if c.IsSet("rootfs-url") {
		url = c.String("rootfs-url")
	}
	if url != "" && !minimal {
		return false, isobuilder.MinimalOptions{}, usagef("--rootfs-url is for minimal ISOs: add --minimal")
	}
	return minimal, isobuilder.MinimalOptions{RootfsURL: url}, nil
}
