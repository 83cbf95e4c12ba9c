package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/safetext"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// Invoked as coreos-installer (a link to the binary), sno-iso takes coreos-installer's command
// lines for the ISO and PXE image commands it shares with it, with coreos-installer's option
// names, defaults, outputs and exit codes. Each command runs the action of the sno-iso command
// that does the same, or the same library calls: this file only maps the command lines.

// dropInName is the program name under which sno-iso acts as coreos-installer.
const dropInName = "coreos-installer"

// isDropInName reports whether argv[0] names the coreos-installer drop-in. Case is ignored:
// Windows keeps whatever case the command was typed in (COREOS-INSTALLER.EXE).
func isDropInName(arg0 string) bool {
	base := filepath.Base(arg0)
	return strings.EqualFold(base, dropInName) || strings.EqualFold(base, dropInName+".exe")
}

// isDropIn reports whether the command runs as coreos-installer.
func isDropIn(c *cli.Context) bool { return c.App.Name == dropInName }

// dropInProvides is what the drop-in provides, for help and for the commands it does not.
const dropInProvides = "iso ignition embed|show|remove, iso kargs modify|reset|show, iso network embed|extract|remove, " +
	"iso reset, iso extract pxe|minimal-iso, iso customize and pxe customize (single node), pxe ignition wrap|unwrap, " +
	"download and dev show iso"

// newDropInApp is sno-iso's application, with its settings and error handling, under
// coreos-installer's name and with coreos-installer's commands.
func newDropInApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := newApp(stdin, stdout, stderr)
	app.Name = dropInName
	app.Usage = "sno-iso acting as coreos-installer for its ISO and PXE image commands"
	app.Description = "This is sno-iso run through a link named coreos-installer. It accepts coreos-installer's\n" +
		"command lines for " + dropInProvides + ";\nfor any other, run coreos-installer itself."
	app.Commands = dropInCommands()
	// clap's -V, --version, which prints "coreos-installer VERSION": urfave/cli's is -v.
	app.HideVersion = true
	app.Flags = []cli.Flag{&cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version", DisableDefaultText: true}}
	app.Before = func(c *cli.Context) error {
		if !c.Bool("version") {
			return nil
		}
		fmt.Fprintln(c.App.Writer, dropInVersionLine())
		return exitStatus(0)
	}
	setUsageErrorHandler(app.Commands)
	setDefaultTexts(app.Commands)
	return app
}

// dropInCommands are coreos-installer's commands, with its option names.
func dropInCommands() []*cli.Command {
	return []*cli.Command{
		notProvided("install", installInstead...),
		dropInDownloadCommand(),
		notProvided("list-stream", listStreamInstead...),
		{Name: "iso", Usage: "Commands to manage a CoreOS live ISO image", Subcommands: []*cli.Command{
			deprecated("embed", "ignition embed", &cli.Command{
				ArgsUsage: "ISO",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "ignition-file", Aliases: []string{"config", "c"}, Usage: "Ignition config `path` to embed [default: stdin]"},
					dropInForce("Overwrite an existing Ignition config"),
					dropInOutput(),
				},
				Action: func(c *cli.Context) error { return embedIgnitionFrom(c, readIgnitionUnvalidated) },
			}),
			deprecated("show", "ignition show", &cli.Command{ArgsUsage: "ISO", Action: ignitionShow}),
			deprecated("remove", "ignition remove", &cli.Command{ArgsUsage: "ISO", Flags: []cli.Flag{dropInOutput()}, Action: ignitionRemove}),
			dropInISOCustomizeCommand(),
			{Name: "ignition", Usage: "Embed an Ignition config in a CoreOS live ISO image", Subcommands: []*cli.Command{
				{
					Name: "embed", Usage: "Embed an Ignition config in an ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{
						dropInForce("Overwrite an existing Ignition config"),
						&cli.StringFlag{Name: "ignition-file", Aliases: []string{"i"}, Usage: "Ignition config `path` to embed [default: stdin]"},
						dropInOutput(),
					},
					Action: func(c *cli.Context) error { return embedIgnitionFrom(c, readIgnitionUnvalidated) },
				},
				{Name: "show", Usage: "Show the embedded Ignition config from an ISO image", ArgsUsage: "ISO", Action: ignitionShow},
				{Name: "remove", Usage: "Remove an existing embedded Ignition config from an ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{dropInOutput()}, Action: ignitionRemove},
			}},
			{Name: "network", Usage: "Embed network settings in a CoreOS live ISO image", Subcommands: []*cli.Command{
				{
					Name: "embed", Usage: "Embed network settings in an ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{
						&cli.StringSliceFlag{Name: "keyfile", Aliases: []string{"k"}, Usage: "NetworkManager keyfile `path` to embed", Required: true},
						dropInForce("Overwrite existing network settings"),
						dropInOutput(),
					},
					Action: networkEmbed,
				},
				{Name: "extract", Usage: "Extract embedded network settings from an ISO image", ArgsUsage: "ISO",
					Flags:  []cli.Flag{&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Usage: "Extract to directory `path` instead of stdout"}},
					Action: networkExtract},
				{Name: "remove", Usage: "Remove existing network settings from an ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{dropInOutput()}, Action: networkRemove},
			}},
			{Name: "kargs", Usage: "Modify kernel args in a CoreOS live ISO image", Subcommands: []*cli.Command{
				{
					Name: "modify", Usage: "Modify kernel args in an ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{
						&cli.StringSliceFlag{Name: "append", Aliases: []string{"a"}, Usage: "Kernel argument `KARG` to append"},
						&cli.StringSliceFlag{Name: "delete", Aliases: []string{"d"}, Usage: "Kernel argument `KARG` to delete"},
						&cli.StringSliceFlag{Name: "replace", Aliases: []string{"r"}, Usage: "Kernel argument `KARG`=OLDVAL=NEWVAL to replace"},
						dropInOutput(),
					},
					Action: modifyKargs,
				},
				{Name: "reset", Usage: "Reset kernel args in an ISO image to defaults", ArgsUsage: "ISO",
					Flags: []cli.Flag{dropInOutput()}, Action: kargsReset},
				{Name: "show", Usage: "Show kernel args from an ISO image", ArgsUsage: "ISO",
					Flags:  []cli.Flag{&cli.BoolFlag{Name: "default", Aliases: []string{"d"}, Usage: "Show default kernel args"}},
					Action: kargsShow},
			}},
			{Name: "extract", Usage: "Commands to extract files from a CoreOS live ISO image", Subcommands: []*cli.Command{
				{Name: "pxe", Usage: "Extract PXE files from an ISO image", ArgsUsage: "ISO",
					Flags:  []cli.Flag{&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Value: ".", Usage: "Output directory `path`"}},
					Action: pxeExtract},
				{
					Name: "minimal-iso", Usage: "Extract a minimal ISO from a CoreOS live ISO image", ArgsUsage: "ISO [OUTPUT_ISO]",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "output-rootfs", Usage: "Extract rootfs image as well to `PATH`"},
						&cli.StringFlag{Name: "rootfs-url", Usage: "Inject rootfs `URL` karg into minimal ISO"},
					},
					Action: extractMinimalISO,
				},
			}},
			{Name: "reset", Usage: "Restore a CoreOS live ISO image to default settings", ArgsUsage: "ISO",
				Flags: []cli.Flag{dropInOutput()}, Action: reset},
		}},
		{Name: "pxe", Usage: "Commands to manage a CoreOS live PXE image", Subcommands: []*cli.Command{
			dropInPXECustomizeCommand(),
			{Name: "ignition", Usage: "Commands to manage a live PXE Ignition config", Subcommands: []*cli.Command{
				{
					Name: "wrap", Usage: "Wrap an Ignition config in an initrd image",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "ignition-file", Aliases: []string{"i"}, Usage: "Ignition config `path` to wrap [default: stdin]"},
						&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Write to file `path` instead of stdout"},
					},
					Action: pxeIgnitionWrap,
				},
				{Name: "unwrap", Usage: "Show the wrapped Ignition config in an initrd image", ArgsUsage: "[INITRD]", Action: pxeIgnitionUnwrap},
			}},
			notProvided("network", pxeNetworkInstead...),
		}},
		notProvided("pack", packInstead...),
		{Name: "dev", Usage: "Development commands (unstable)", Subcommands: []*cli.Command{
			{Name: "show", Usage: "Commands to show metadata", Subcommands: []*cli.Command{
				{
					Name: "iso", Usage: "Inspect the CoreOS live ISO image", ArgsUsage: "ISO",
					Flags: []cli.Flag{
						&cli.BoolFlag{Name: "ignition", Usage: "Show Ignition embed area parameters"},
						&cli.BoolFlag{Name: "kargs", Usage: "Show kargs embed area parameters"},
					},
					Action: devShowISO,
				},
				notProvided("initrd", devInstead...),
				notProvided("fiemap", devInstead...),
			}},
			notProvided("extract", devInstead...),
		}},
	}
}

func dropInOutput() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Write ISO to a new output `path` (- for stdout)"}
}

// dropInForce is coreos-installer's -f: it replaces what the ISO embeds, never an output file.
func dropInForce(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: usage}
}

// deprecated is coreos-installer's hidden `iso NAME`, which says to use `iso INSTEAD` and
// runs as it.
func deprecated(name, instead string, c *cli.Command) *cli.Command {
	c.Name, c.Hidden, c.Usage = name, true, "deprecated: use iso "+instead
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		fmt.Fprintf(ctx.App.ErrWriter, "`iso %s` is deprecated; use `iso %s`.  Continuing.\n", name, instead)
		return action(ctx)
	}
	return c
}

// readIgnitionUnvalidated reads the config as coreos-installer does, without validating it,
// and warns when the live system would reject it at boot.
func readIgnitionUnvalidated(c *cli.Context) ([]byte, error) {
	raw, err := readIgnitionBytes(c)
	if err != nil {
		return nil, err
	}
	if _, _, err := coreos.ParseIgnition(raw); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s is not a valid Ignition config, embedding it anyway as coreos-installer does; "+
			"the live system will fail to boot with it: %v\n",
			ignitionSourceName(c), err)
	}
	return raw, nil
}

// extractMinimalISO is `iso extract minimal-iso ISO [OUTPUT_ISO]`: standard output by
// default, and only what coreos/miniso.dat records (sno-iso minimal also rebuilds one).
func extractMinimalISO(c *cli.Context) error {
	out := "-"
	switch c.NArg() {
	case 1:
	case 2:
		out = c.Args().Get(1)
	default:
		return usagef("%s takes an ISO and an optional OUTPUT_ISO, got %d arguments", c.Command.HelpName, c.NArg())
	}
	fromMiniso := func(ctx context.Context, iso *isobuilder.LiveISO, dir string,
		opts isobuilder.MinimalOptions) (*isobuilder.DerivedISO, error) {
		return iso.MinimalFromMiniso(ctx, dir, opts)
	}
	return writeMinimal(c, c.Args().First(), out, fromMiniso)
}

// dropInSpellings spells the sno-iso commands that errors and notes suggest as
// coreos-installer spells them, where it has them. Patterns are tried in this order at each
// place, so the first keeps `sno-iso minimal ISO OUT`, which rebuilds a minimal ISO as
// coreos-installer cannot, while its stream form becomes extract minimal-iso's.
var dropInSpellings = strings.NewReplacer(
	"`sno-iso minimal ISO OUT`", "`sno-iso minimal ISO OUT`",
	"`sno-iso reset` (or `coreos-installer iso reset`)", "`coreos-installer iso reset`",
	"sno-iso minimal ", "coreos-installer iso extract minimal-iso ",
	"sno-iso reset", "coreos-installer iso reset",
	"sno-iso ignition ", "coreos-installer iso ignition ",
	"sno-iso kargs ", "coreos-installer iso kargs ",
	"sno-iso network ", "coreos-installer iso network ",
	"sno-iso pxe extract", "coreos-installer iso extract pxe",
	"sno-iso pxe ignition ", "coreos-installer pxe ignition ",
)

// spellCommands is text, an error or a note for the user, with the sno-iso commands it
// suggests spelt as the program was run: coreos-installer's where the drop-in runs.
func spellCommands(app *cli.App, text string) string {
	if app.Name != dropInName {
		return text
	}
	return dropInSpellings.Replace(text)
}

// printWritten prints the paths of the files written into dir, one a line: cleaned, as
// filepath.Join gives them, for sno-iso; for coreos-installer, as its Path::join gives them,
// DIR/NAME unnormalized (./NAME in the default ., ./d/NAME for ./d/), for the scripts that
// compare them.
func printWritten(c *cli.Context, dir string, written []string) {
	for _, p := range written {
		if rel, err := filepath.Rel(dir, p); err == nil && isDropIn(c) {
			p = joinUnnormalized(dir, rel)
		}
		fmt.Fprintln(c.App.Writer, safetext.Escape(p)) // names from the ISO: one line each, whatever they hold
	}
}

// joinUnnormalized appends name to dir as Rust's Path::join does: with a separator unless dir
// is empty or already ends with one.
func joinUnnormalized(dir, name string) string {
	if dir == "" || os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// existsAdvice is forceAdvice for the commands both spellings share: coreos-installer has no
// option that replaces an output file.
func existsAdvice(c *cli.Context, err error) error {
	if !isDropIn(c) {
		return forceAdvice(err)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w; remove it or name another output", err)
	}
	return err
}
