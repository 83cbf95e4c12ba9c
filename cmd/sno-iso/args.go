package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// helpArgs turns `sno-iso help CMD [SUBCMD...]` into `sno-iso CMD [SUBCMD...] --help`: the
// command list hides urfave/cli's help command, whose `help CMD SUBCMD` would show CMD's help.
// A name that is no command is left to fail as one, with the nearest name.
func helpArgs(app *cli.App, args []string) []string {
	if len(args) < 2 || args[1] != "help" {
		return args
	}
	out := append([]string{args[0]}, args[2:]...)
	commands := app.Commands
	for _, name := range args[2:] {
		if strings.HasPrefix(name, "-") {
			break
		}
		cmd := findCommand(commands, name)
		if cmd == nil {
			return out
		}
		commands = cmd.Subcommands
	}
	return append(out, "--help")
}

// intersperse moves the options of the command named by args in front of its positional
// arguments, so that `ignition embed rhcos.iso -i config.ign` works as it does with
// coreos-installer; urfave/cli stops reading options at the first positional argument.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	commands, flags := app.Commands, app.Flags
	i := 1
	for ; i < len(args); i++ {
		cmd := findCommand(commands, args[i])
		if cmd == nil {
			break
		}
		commands, flags = cmd.Subcommands, cmd.Flags
	}
	out := append([]string{}, args[:i]...)
	var positional []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) > 0 {
		out = append(out, "--")
	}
	return append(out, positional...)
}

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the option arg (e.g. "-i", "--output", "-fi") consumes the next
// argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	name := strings.TrimLeft(arg, "-")
	if f := findFlag(flags, name); f != nil {
		return flagTakesValue(f)
	}
	// Combined short options such as -fi: only the last one may take a value.
	if !strings.HasPrefix(arg, "--") && len(name) > 1 {
		if f := findFlag(flags, name[len(name)-1:]); f != nil {
			return flagTakesValue(f)
		}
	}
	return false
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func flagTakesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return false
}
