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
// coreos-installer; urfave/cli stops reading options at the first positional argument. Each
// option is spelt long (see spellOption), and one that takes a single value, or none, given
// twice is a usage error, as coreos-installer's parser has it: the last would silently win.
func intersperse(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
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
	// A command with subcommands takes no arguments: a word where a subcommand goes is a
	// mistyped one, and left in place it reaches unknownCommand, which names the nearest,
	// instead of the options after it being read as the group's unknown options.
	if i < len(args) && len(commands) > 0 && !strings.HasPrefix(args[i], "-") {
		return args, nil
	}
	out := append([]string{}, args[:i]...)
	var positional []string
	given := map[cli.Flag]bool{}
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			spelt, named, took := spellOption(flags, a, args[i+1:])
			// Left without its value, the option would take the "--" put before the
			// arguments below: kargs modify ISO -a would append "--".
			if n := len(named); n > 0 && flagTakesValue(named[n-1]) && took == 0 && !strings.Contains(spelt[len(spelt)-1], "=") {
				return nil, usagef("%s needs a value", flagNames(named[n-1]))
			}
			for _, f := range named {
				if given[f] && !isSliceFlag(f) {
					return nil, usagef("%s cannot be used multiple times; give it once", flagNames(f))
				}
				given[f] = true
			}
			out = append(out, spelt...)
			i += took
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) > 0 {
		out = append(out, "--")
	}
	return append(out, positional...), nil
}

// spellOption spells the option argument arg by long names, so that a repeated option may mix
// its forms (-k a --keyfile b), which urfave/cli refuses and coreos-installer accepts, and
// reads short options as coreos-installer's parser does: combined (-fi config.ign), the last
// taking its value from the rest of the argument (-ficonfig.ign, -o-) or from the next one.
// It returns the arguments for urfave/cli, the options named, and how many arguments of next
// it took as a value. An option named whole (-i, --output=x, or a long name after one dash,
// which Go's flag package allows) is left one option; an unknown short option in a
// combination ends it as -x, for the parser to report as unknown.
func spellOption(flags []cli.Flag, arg string, next []string) (spelt []string, named []cli.Flag, took int) {
	name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	whole, value, hasValue := strings.Cut(name, "=")
	if f := findFlag(flags, whole); f != nil {
		long := "--" + f.Names()[0]
		if hasValue {
			return []string{long + "=" + value}, []cli.Flag{f}, 0
		}
		if flagTakesValue(f) && len(next) > 0 {
			return []string{long, next[0]}, []cli.Flag{f}, 1
		}
		return []string{long}, []cli.Flag{f}, 0
	}
	if strings.HasPrefix(arg, "--") {
		return []string{arg}, nil, 0
	}
	for j, r := range name {
		f := findFlag(flags, string(r))
		if f == nil {
			return append(spelt, "-"+string(r)), named, 0
		}
		long := "--" + f.Names()[0]
		named = append(named, f)
		if !flagTakesValue(f) {
			spelt = append(spelt, long)
			continue
		}
		// A known short option is one ASCII byte: the rest of the argument follows it.
		if rest := name[j+1:]; rest != "" {
			return append(spelt, long+"="+strings.TrimPrefix(rest, "=")), named, 0
		}
		if len(next) > 0 {
			return append(spelt, long, next[0]), named, 1
		}
		return append(spelt, long), named, 0
	}
	return spelt, named, 0
}

// flagNames spells an option's names as an error names it: --output (-o).
func flagNames(f cli.Flag) string {
	names := f.Names()
	s := optionName(names[0])
	for _, alias := range names[1:] {
		s += " (" + optionName(alias) + ")"
	}
	return s
}

func isSliceFlag(f cli.Flag) bool {
	s, ok := f.(cli.DocGenerationSliceFlag)
	return ok && s.IsSliceFlag()
}

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
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
