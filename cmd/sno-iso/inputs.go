package main

import (
	"fmt"
	"os"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// commandInputs lists the files the command line names as inputs (its options that name what
// they read, pathFlags), with more (the ISO argument): an output must never be one of them,
// --force or not.
func commandInputs(c *cli.Context, more ...string) []string {
	inputs := append([]string(nil), more...)
	for _, p := range pathFlags(c.Command.Flags) {
		if p.noun == "" || !c.IsSet(p.name) {
			continue // an output
		}
		if p.slice {
			inputs = append(inputs, c.StringSlice(p.name)...)
		} else {
			inputs = append(inputs, c.String(p.name))
		}
	}
	return inputs
}

// refuseStdoutInput refuses to stream an image into standard output when standard output is
// one of the inputs (1<>in.iso, >>in.iso): the input would be overwritten as it is read.
func refuseStdoutInput(c *cli.Context, inputs []string) error {
	stdout, ok := c.App.Writer.(*os.File)
	if !ok {
		return nil
	}
	out, err := stdout.Stat()
	if err != nil || !out.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		if info, err := os.Stat(in); err == nil && os.SameFile(info, out) {
			return fmt.Errorf("writing to standard output: %w (%s); redirect it to another file", isobuilder.ErrOutputIsInput, in)
		}
	}
	return nil
}
