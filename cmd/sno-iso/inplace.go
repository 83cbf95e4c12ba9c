package main

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// inPlaceLockWait is how long an in-place edit waits for another one on the same ISO: edits
// take well under a second, so a longer wait means a stuck or long-running editor.
const inPlaceLockWait = 30 * time.Second

// editsInPlace reports whether the command edits its ISO argument in place: it writes a result
// (it has --output) and no output was named.
func editsInPlace(c *cli.Context) bool {
	hasOutput := slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "output") })
	return hasOutput && !c.IsSet("output")
}

// openISO opens the ISO at path, locked against other in-place editors when the command edits
// it in place, so that what it reads is what it will write over.
func openISO(c *cli.Context, path string) (*isobuilder.LiveISO, error) {
	if !editsInPlace(c) {
		return isobuilder.Open(path)
	}
	iso, err := isobuilder.OpenForEdit(c.Context, path, inPlaceLockWait)
	if errors.Is(err, isobuilder.ErrLocked) {
		return nil, fmt.Errorf("%w; wait for it to finish and run the command again, or write a copy with -o FILE", err)
	}
	return iso, err
}
