package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func minimalCommand() *cli.Command {
	return &cli.Command{
		Name:      "minimal",
		Usage:     "make a minimal ISO: the live ISO without its root file system, fetched over HTTP(S) at boot",
		ArgsUsage: "ISO OUT",
		Description: "Writes OUT (- for standard output): byte for byte what\n" +
			"`coreos-installer iso extract minimal-iso` writes when the ISO carries coreos/miniso.dat, else a\n" +
			"rebuilt ISO that still boots from CD and USB stick.\n" +
			"Without --rootfs-url the live system needs coreos.live.rootfs_url= added at boot (or PXE).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "rootfs-url", Usage: "fetch the root file system from `URL` (added as coreos.live.rootfs_url=)"},
			&cli.StringFlag{Name: "output-rootfs", Usage: "also write images/pxeboot/rootfs.img to `FILE`, for serving at the URL"},
			forceFlag("replace existing output files"),
			&cli.BoolFlag{Name: "rebuild", Usage: "rebuild the ISO even when coreos/miniso.dat could rebuild the minimal ISO"},
		},
		Action: minimal,
	}
}

func minimal(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("minimal takes an ISO and an output (- for standard output), got %d arguments", c.NArg())
	}
	derive := node.MinimalISO
	if c.Bool("rebuild") {
		derive = func(ctx context.Context, iso *isobuilder.LiveISO, dir string, opts isobuilder.MinimalOptions) (*isobuilder.DerivedISO, error) {
			return iso.Rebuild(ctx, dir, isobuilder.RebuildOptions{Minimal: true, MinimalOptions: opts})
		}
	}
	return writeMinimal(c, c.Args().Get(0), c.Args().Get(1), derive)
}

// writeMinimal writes the minimal ISO that derive makes of the ISO at isoPath to out (- for
// standard output), and the rootfs to --output-rootfs, both or neither.
func writeMinimal(c *cli.Context, isoPath, out string,
	derive func(context.Context, *isobuilder.LiveISO, string, isobuilder.MinimalOptions) (*isobuilder.DerivedISO, error)) error {
	if out == "" {
		return usagef("%s: the output argument is empty; name a file (- for standard output)", c.Command.HelpName)
	}
	if err := refuseDeviceOutput(out, "sno-iso minimal "+isoPath+" -"); err != nil {
		return err
	}
	rootfsOut, force := c.String("output-rootfs"), c.Bool("force")
	opts := isobuilder.MinimalOptions{RootfsURL: c.String("rootfs-url")}
	if c.IsSet("rootfs-url") {
		if err := checkRootfsURLFlag(c, opts.RootfsURL); err != nil {
			return err
		}
	}
	if isobuilder.SameFile(out, rootfsOut) {
		return usagef("--output-rootfs %s and the output %s are the same file: one would replace the other; give two names", rootfsOut, out)
	}
	if out == "-" {
		if err := refuseTerminalStdout(c, "name an output file"); err != nil {
			return err
		}
	} else if err := refuseExisting(out, force, []string{isoPath}); err != nil {
		return existsAdvice(c, err)
	}
	if rootfsOut != "" {
		if err := refuseExisting(rootfsOut, force, []string{isoPath}); err != nil {
			return existsAdvice(c, err)
		}
	}
	iso, err := openISOToCopy(c, isoPath)
	if err != nil {
		return err
	}
	defer iso.Close()
	if err := iso.CheckPristine(); err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	media, err := derive(c.Context, iso, tempDirFor(out), opts)
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	defer media.Close()
	img, err := media.Image()
	if err != nil {
		return err
	}
	o := isobuilder.Output{File: out, Force: force, Keep: []string{isoPath}}
	if out == "-" {
		if err := refuseStdoutInput(c, o.Keep); err != nil {
			return err
		}
		opts, done := progress(c, img.Size())
		defer done()
		o = isobuilder.Output{Stream: c.App.Writer, Force: force, Keep: o.Keep, Progress: opts.Progress}
	}
	// The rootfs and the minimal ISO appear together or not at all.
	if err := o.WriteWithRootfs(c.Context, iso, media, img, rootfsOut); err != nil {
		return existsAdvice(c, err)
	}
	sayWrote(c, out, fmt.Sprintf(" (%d MiB)%s", img.Size()>>20, spellCommands(c.App, rootfsNote(opts.RootfsURL))))
	return nil
}

// checkRootfsURLFlag refuses a --rootfs-url that the live system cannot fetch its root file
// system from. coreos-installer takes any URL that the bootloaders pass whole (it refuses
// whitespace), so its spelling only warns of the rest.
func checkRootfsURLFlag(c *cli.Context, url string) error {
	if isDropIn(c) {
		if err := isobuilder.CheckRootfsURL(url); err != nil {
			return err
		}
		if err := coreos.ValidateRootfsURL(url); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "Warning: --rootfs-url: %v; the live system will not be able to fetch its root file system from it\n", err)
		}
		return nil
	}
	if err := coreos.ValidateRootfsURL(url); err != nil {
		return usagef("--rootfs-url: %v; give the http(s) URL at which you serve the ISO's images/pxeboot/rootfs.img "+
			"(sno-iso minimal --output-rootfs writes it)", err)
	}
	return isobuilder.CheckRootfsURL(url)
}

func rootfsNote(url string) string {
	switch {
	case url == "":
		return "; it boots only with coreos.live.rootfs_url= added (sno-iso kargs modify -a) or over PXE"
	case coreos.ValidateRootfsURL(url) != nil:
		return ", with coreos.live.rootfs_url=" + url
	}
	return ": the live system fetches its root file system from " + url
}

// refuseExisting fails early, before any work, when path is one of inputs, or exists and
// force is not given; the caller adds the advice its command line calls for.
func refuseExisting(path string, force bool, inputs []string) error {
	if err := isobuilder.CheckOutput(path, inputs...); err != nil {
		return err
	}
	if _, err := os.Lstat(path); err == nil && !force {
		return fmt.Errorf("writing %s: %w", path, isobuilder.ErrFileExists)
	}
	return nil
}

// tempDirFor is where the temporary image for out goes: beside it, so that it is renamed
// into place, or the temporary directory for standard output.
func tempDirFor(out string) string {
	if out == "-" {
		return os.TempDir()
	}
	return filepath.Dir(out)
}
