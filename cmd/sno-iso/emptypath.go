package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// pathFlag is an option whose value names a file or a directory.
type pathFlag struct {
	name  string
	slice bool
	// noun is what the value names, for the error ("a file"); "" for an output.
	noun string
}

// pathNouns are the placeholders (the `FILE` of a flag's usage) of options that name what
// they read, with what the value names.
var pathNouns = map[string]string{
	"FILE":     "a file",
	"PATH":     "a path",
	"DIR":      "a directory",
	"DIR/NODE": "a node directory",
	"ISO":      "the live ISO",
	"SOURCE":   "a file, URL or stream name (- for standard input)",
}

// pathFlags returns the options that name files or directories: those that name where a
// command writes (--output, --output-dir, --output-rootfs), and those whose placeholder is
// one of pathNouns.
func pathFlags(flags []cli.Flag) []pathFlag {
	var paths []pathFlag
	for _, f := range flags {
		var p pathFlag
		switch f := f.(type) {
		case *cli.StringFlag:
			p = pathFlag{name: f.Name, noun: pathNouns[placeholder(f.Usage)]}
		case *cli.StringSliceFlag:
			p = pathFlag{name: f.Name, slice: true, noun: pathNouns[placeholder(f.Usage)]}
		default:
			continue
		}
		if strings.HasPrefix(p.name, "output") {
			p.noun = ""
		} else if p.noun == "" {
			continue
		}
		paths = append(paths, p)
	}
	return paths
}

// placeholder is the back-quoted word of a flag's usage, as urfave/cli shows it in the help,
// in capitals: the drop-in spells its placeholders as coreos-installer does (`path`).
func placeholder(usage string) string {
	_, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return ""
	}
	word, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return strings.ToUpper(word)
}

// refuseEmptyPaths makes an option that names a file or a directory given an empty value a
// usage error: `-o "$OUT"` with OUT unset must not turn into an in-place edit of the input or
// a default file name, nor `-i "$CONFIG"` into reading standard input, nor `-C "$DIR"` into
// printing secrets.
func refuseEmptyPaths(ctx *cli.Context, paths []pathFlag) error {
	for _, p := range paths {
		if !ctx.IsSet(p.name) {
			continue
		}
		if empty := (p.slice && slices.Contains(ctx.StringSlice(p.name), "")) || (!p.slice && ctx.String(p.name) == ""); !empty {
			continue
		}
		if p.noun == "" {
			return usagef("%s: --%s is empty; name a file (- for standard output), or leave the option out", ctx.Command.HelpName, p.name)
		}
		return usagef("%s: --%s is empty; name %s", ctx.Command.HelpName, p.name, p.noun)
	}
	return nil
}
