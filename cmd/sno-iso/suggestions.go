package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/download"
	"github.com/sno-iso/sno-iso/internal/suggest"
	"github.com/urfave/cli/v2"
)

// badValue is the usage error of a value of --name that is none of valid, naming the valid
// value meant when one is near (a typo, or another tool's name for it such as arm64).
func badValue(name, value string, valid []string) error {
	list := strings.Join(valid[:len(valid)-1], ", ") + " or " + valid[len(valid)-1]
	if s := nearestValue(value, valid); s != "" {
		return usagef("--%s must be %s, got %q; did you mean %q?", name, list, value, s)
	}
	return usagef("--%s must be %s, got %q", name, list, value)
}

// nearestValue is the value of valid that value most likely means, or "".
func nearestValue(value string, valid []string) string {
	if s := download.StreamArch(strings.ToLower(value)); s != value && slices.Contains(valid, s) {
		return s
	}
	return suggest.Nearest(value, valid)
}

// nearestForShort is the option of cmd that the unknown short option -letter most likely
// means: the one that another command's -letter stands for (build's --ignition for
// ignition embed's -i, --network-keyfile for network embed's -k), else cmd's only option
// that begins with letter. It returns "" when there is no such option.
func nearestForShort(app *cli.App, cmd *cli.Command, letter string) string {
	var mine []string
	for _, f := range cmd.VisibleFlags() {
		mine = append(mine, f.Names()[0])
	}
	for _, long := range shortMeanings(app.Commands, letter) {
		for _, name := range mine {
			if strings.HasPrefix(long, name) || strings.HasPrefix(name, long) || strings.HasSuffix(name, "-"+long) {
				return name
			}
		}
	}
	var initial []string
	for _, name := range mine {
		if strings.HasPrefix(name, letter) {
			initial = append(initial, name)
		}
	}
	if len(initial) == 1 {
		return initial[0]
	}
	return ""
}

// shortMeanings lists the long names that -letter stands for in commands and their
// subcommands, in the commands' order.
func shortMeanings(commands []*cli.Command, letter string) []string {
	var longs []string
	for _, c := range commands {
		for _, f := range c.Flags {
			if names := f.Names(); slices.Contains(names[1:], letter) && !slices.Contains(longs, names[0]) {
				longs = append(longs, names[0])
			}
		}
		longs = append(longs, shortMeanings(c.Subcommands, letter)...)
	}
	return longs
}

// archError adds to a stream's missing architecture the one --arch most likely meant.
func archError(missing *download.NotInStreamError) error {
	if s := nearestValue(missing.Want, missing.Have); s != "" {
		return &usageError{fmt.Sprintf("%s; did you mean --arch %s?", missing, s)}
	}
	return fmt.Errorf("%w; choose one with --arch", missing)
}
