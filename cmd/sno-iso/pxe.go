package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func pxeCommand() *cli.Command {
	return &cli.Command{
		Name:  "pxe",
		Usage: "network boot: extract the PXE files, wrap an Ignition config as an initrd, build a node's PXE directory",
		Subcommands: []*cli.Command{
			{
				Name:      "extract",
				Usage:     "copy the kernel, initramfs and rootfs out of a live ISO as <ISO name>-vmlinuz, -initrd.img, -rootfs.img",
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Value: ".", Usage: "write the files to `DIR`, created if needed"},
				},
				Action: pxeExtract,
			},
			{
				Name:  "ignition",
				Usage: "wrap an Ignition config as an initrd, or get it back from one",
				Subcommands: []*cli.Command{
					{
						Name:  "wrap",
						Usage: "write an initrd (xz newc) holding config.ign, to append to the live initramfs",
						Flags: []cli.Flag{
							&cli.StringFlag{Name: "ignition-file", Aliases: []string{"i"}, Usage: "read the config from `FILE` (default: standard input)"},
							&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the initrd to `FILE` (default: standard output)"},
							forceFlag("replace an existing output file"),
						},
						Action: pxeIgnitionWrap,
					},
					{
						Name:      "unwrap",
						Usage:     "print the config.ign of an initrd, or of a whole customized initramfs",
						ArgsUsage: "[INITRD]",
						Action:    pxeIgnitionUnwrap,
					},
				},
			},
			{
				Name:  "build",
				Usage: "make a node's PXE directory: kernel, customized initramfs, rootfs and iPXE, PXELINUX and GRUB configurations",
				Description: "Prepares the bootstrap-in-place Ignition exactly as `build` does, appends it to the ISO's live\n" +
					"initramfs, and writes DIR/vmlinuz, DIR/initrd.img, DIR/rootfs.img, DIR/boot.ipxe,\n" +
					"DIR/pxelinux.cfg/default and DIR/grub.cfg. With --base-url the configurations fetch the\n" +
					"files from that URL and the live system its rootfs (coreos.live.rootfs_url); without it they\n" +
					"use names relative to where the loader found its configuration, and load the rootfs as a\n" +
					"second initrd.",
				Flags: append(append(liveISOFlags("the RHCOS live `ISO`: a path, or an http(s) or s3://BUCKET/KEY URL"),
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the files to `DIR`, created if needed", Required: true},
					&cli.StringFlag{Name: "base-url", Usage: "the http(s) `URL` at which DIR will be served"},
					forceFlag("replace existing files in DIR"),
				), nodeFlags()...),
				Before: checkNodeFlags,
				Action: withLiveISO(pxeBuild),
			},
		},
	}
}

func pxeExtract(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	dir := c.String("output-dir")
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Base(isoPath)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if stem == "" {
		stem = base
	}
	written, err := iso.ExtractPXE(c.Context, dir, stem+"-")
	if err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(dir) // only if empty: it was made for this run
		}
		return err
	}
	printWritten(c, dir, written)
	return nil
}

func pxeIgnitionWrap(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("pxe ignition wrap takes no arguments, got %q; the config comes from -i FILE or standard input", c.Args().Slice())
	}
	config, err := readIgnitionBytes(c)
	if err != nil {
		return err
	}
	packed, err := isobuilder.WrapIgnition(config)
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" || out == "-" {
		if err := refuseTerminalStdout(c, "use -o FILE"); err != nil {
			return err
		}
		if err := refuseStdoutInput(c, commandInputs(c)); err != nil {
			return err
		}
		_, err := c.App.Writer.Write(packed)
		return err
	}
	img, err := isobuilder.NewImage(bytes.NewReader(packed), int64(len(packed)))
	if err != nil {
		return err
	}
	if err := (isobuilder.Output{File: out, Force: c.Bool("force"), Keep: commandInputs(c)}).Write(c.Context, img); err != nil {
		return existsAdvice(c, err)
	}
	sayWrote(c, out, "")
	return nil
}

func pxeIgnitionUnwrap(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("pxe ignition unwrap takes at most one INITRD argument, got %d", c.NArg())
	}
	name, r := "standard input", c.App.Reader
	if c.NArg() == 1 {
		name = c.Args().First()
		f, _, err := input.OpenRegular(name, "an initrd")
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	} else if stdin, ok := r.(*os.File); ok && isTerminal(stdin) {
		return usagef("no initrd given: pass INITRD or pipe it to standard input")
	}
	config, err := isobuilder.UnwrapIgnition(c.Context, r)
	if errors.Is(err, isobuilder.ErrNoIgnitionInArchive) {
		return fmt.Errorf("%w %s", err, name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, err = c.App.Writer.Write(config)
	return err
}

func pxeBuild(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("pxe build takes no arguments, got %q; the ISO goes in --iso", c.Args().Slice())
	}
	baseURL, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return err
	}
	iso, isoPath, n, inputs, err := openNode(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	set, err := n.PXE(iso, baseURL)
	if err != nil {
		return nodeError(err, isoPath)
	}
	outDir := c.String("output")
	bar := func(_ string, size int64) (isobuilder.Progress, func()) {
		opts, done := progress(c, size)
		return opts.Progress, done
	}
	err = set.WriteDir(c.Context, outDir, node.DirOptions{Force: c.Bool("force"), Keep: inputs, Progress: bar})
	var isoErr *node.ISOError
	if errors.As(err, &isoErr) && isoErr.File != "" {
		return fmt.Errorf("%s of %s: %w", isoErr.File, isoPath, isoErr.Err)
	}
	if err != nil {
		return forceAdvice(err)
	}
	printWarnings(c, n.Warnings)
	sayWrote(c, outDir, ": "+strings.Join(set.Names(), ", "))
	if baseURL != "" {
		fmt.Fprintf(c.App.ErrWriter, "Serve it at %s and boot with iPXE: chain %s\n", baseURL, set.Layout().URL(node.IPXEConfig))
	} else {
		fmt.Fprintf(c.App.ErrWriter, "Serve it over HTTP and chain boot.ipxe from iPXE, or over TFTP beside pxelinux.0 or GRUB; "+
			"--base-url lets the live system fetch the rootfs instead of loading it as a second initrd.\n")
	}
	return nil
}

// parseBaseURL checks --base-url: an absolute http or https URL that file names can be
// appended to.
func parseBaseURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", usagef("--base-url %q contains whitespace or control characters", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", usagef("--base-url %q is not a URL: %v", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", usagef("--base-url %q must start with http:// or https://: the live system fetches the rootfs over HTTP", s)
	case u.Host == "":
		return "", usagef("--base-url %q has no host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", usagef("--base-url %q must be a plain directory URL, without user, query or fragment: file names are appended to it", s)
	}
	return strings.TrimRight(s, "/"), nil
}
