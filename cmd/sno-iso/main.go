// Command sno-iso makes Single Node OpenShift boot media from a CoreOS live ISO: it embeds the
// bootstrap-in-place Ignition into the ISO and writes full or minimal ISOs and PXE artifacts.
// The work is done by the library packages (node above all); this command parses flags,
// prints output and progress, and adds to library errors the flags and commands that fix
// them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/suggest"
	"github.com/sno-iso/sno-iso/nmstate"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

// usageError marks a command line that cannot be run as given; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitStatus ends the run with its exit code and no message: what was printed says it all.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                   "sno-iso",
		Usage:                  "make Single Node OpenShift boot media from a CoreOS live ISO",
		Version:                versionLine(),
		UseShortOptionHandling: true,
		// Kernel arguments such as console=ttyS0,115200n8 contain commas.
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		OnUsageError:              onUsageError,
		Action:                    unknownCommand,
		// Errors are printed once, by main, with the exit code they deserve.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			buildCommand(),
			ignitionCommand(),
			kargsCommand(),
			networkCommand(),
			resetCommand(),
			inspectCommand(),
			minimalCommand(),
			machineconfigCommand(),
			pxeCommand(),
			serveCommand(),
			downloadCommand(),
			bmcCommand(),
			waitCommand(),
			devCommand(),
			versionCommand(),
		},
	}
	setUsageErrorHandler(app.Commands)
	setDefaultTexts(app.Commands)
	return app
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		return unknownOption(c, name)
	}
	if err, ok := flagValueError(c, err); ok {
		return err
	}
	return &usageError{err.Error()}
}

// unknownOption is the usage error of an option the command does not have (name without
// its dashes), with the nearest one it has.
func unknownOption(c *cli.Context, name string) error {
	var names []string
	for _, f := range c.Command.VisibleFlags() {
		names = append(names, f.Names()...)
	}
	s := suggest.Nearest(name, names)
	if len(name) == 1 {
		s = nearestForShort(c.App, c.Command, name)
	}
	if s != "" {
		return usagef("unknown option %s; did you mean %s?", optionName(name), optionName(s))
	}
	return usagef("unknown option %s; run %s --help to list the options", optionName(name), c.Command.HelpName)
}

// optionName spells an option as the help does: -o, --output.
func optionName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// setUsageErrorHandler makes every command report a bad command line as a usage error (exit
// 2): urfave/cli passes neither the app's handler down to subcommands nor missing required
// flags through a handler, so required flags, and empty files and directories, are checked
// here instead.
func setUsageErrorHandler(commands []*cli.Command) {
	for _, c := range commands {
		c.OnUsageError = onUsageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = unknownCommand
		}
		required, paths := takeRequiredFlags(c.Flags), pathFlags(c.Flags)
		if before := c.Before; len(required)+len(paths) > 0 {
			c.Before = func(ctx *cli.Context) error {
				for _, name := range required {
					if !ctx.IsSet(name) {
						return usagef("%s needs --%s (see --help)", ctx.Command.HelpName, name)
					}
				}
				if err := refuseEmptyPaths(ctx, paths); err != nil || before == nil {
					return err
				}
				return before(ctx)
			}
		}
		setUsageErrorHandler(c.Subcommands)
	}
}

// takeRequiredFlags clears the Required mark of flags and returns their names.
func takeRequiredFlags(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required = false
				names = append(names, f.Name)
			}
		case *cli.StringSliceFlag:
			if f.Required {
				f.Required = false
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// unknownCommand runs when no subcommand matched: help when none was named, else a usage error.
// The coreos-installer drop-in prints that help on standard error and exits 2, as clap does.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 && isDropIn(c) {
		cli.HelpPrinter(c.App.ErrWriter, cli.SubcommandHelpTemplate, c.Command)
		return exitStatus(exitUsage)
	}
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	name := c.Args().First()
	if s := nearestSubcommand(c, name); s != "" {
		return usagef("unknown command %q; did you mean %q?", name, s)
	}
	return usagef("unknown command %q; run %s --help to list the commands", name, c.Command.HelpName)
}

// nearestSubcommand is the name of c's subcommand nearest to name, or "" when none is near.
func nearestSubcommand(c *cli.Context, name string) string {
	var names []string
	for _, sub := range c.Command.VisibleCommands() {
		names = append(names, sub.Names()...)
	}
	return suggest.Nearest(name, names)
}

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code, one of exitCodes.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(stdin, stdout, stderr)
	if len(args) > 0 && isDropInName(args[0]) {
		app = newDropInApp(stdin, stdout, stderr)
	}
	if text, ok := helpTopic(args); ok && !strings.EqualFold(app.Name, dropInName) {
		fmt.Fprint(stdout, text)
		return exitOK
	}
	args, err := intersperse(app, helpArgs(app, args))
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	var status exitStatus
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &status):
		return int(status)
	}
	fmt.Fprintf(stderr, "Error: %s\n", spellCommands(app, errorText(err)))
	var usage *usageError
	var network *nmstate.Error
	var hostname *coreos.HostnameError
	var duplicate *node.DuplicateKeyfileError
	if errors.As(err, &usage) || errors.As(err, &network) || errors.As(err, &hostname) || errors.As(err, &duplicate) {
		return exitUsage
	}
	return exitFailed
}
