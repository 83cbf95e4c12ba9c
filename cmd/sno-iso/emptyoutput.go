package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// outputFlagNames returns the names of the options that name where a command writes
// (--output, --output-dir, --output-rootfs).
func outputFlagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		if s, ok := f.(*cli.StringFlag); ok && strings.HasPrefix(s.Name, "output") {
			names = append(names, s.Name)
		}
	}
	return names
}

// refuseEmptyOutputs makes an output option given an empty value a usage error: `-o "$OUT"`
// with OUT unset must not turn into an in-place edit of the input or a default file name.
func refuseEmptyOutputs(ctx *cli.Context, names []string) error {
	for _, name := range names {
		if ctx.IsSet(name) && ctx.String(name) == "" {
			return usagef("%s: --%s is empty; name a file (- for standard output), or leave the option out", ctx.Command.HelpName, name)
		}
	}
	return nil
}
