package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/urfave/cli/v2"
)

// inPlaceLockWait is how long an in-place edit waits for another one on the same ISO: edits
// take well under a second, so a longer wait means a stuck or long-running editor.
const inPlaceLockWait = 30 * time.Second

// editsInPlace reports whether the command edits its ISO argument in place: it writes a result
// (it has --output) and no output was named.
func editsInPlace(c *cli.Context) bool {
	return hasOutput(c) && !c.IsSet("output")
}

func hasOutput(c *cli.Context) bool {
	return slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "output") })
}

// openISO opens the ISO at path: locked against other in-place editors when the command edits
// it in place, so that what it reads is what it will write over; shared with other readers,
// but not with an editor, when it writes a copy, so that the copy is of one version.
func openISO(c *cli.Context, path string) (*isobuilder.LiveISO, error) {
	switch {
	case !hasOutput(c):
		// What only shows the ISO may see it mid-edit; it reports areas that disagree.
		return isobuilder.Open(path)
	case !editsInPlace(c):
		return openISOToCopy(c, path)
	}
	iso, err := isobuilder.OpenForEdit(c.Context, path, inPlaceLockWait)
	switch {
	case errors.Is(err, isobuilder.ErrLocked):
		return nil, fmt.Errorf("%w; wait for it to finish and run the command again, or write a copy with -o FILE", err)
	case errors.Is(err, isobuilder.ErrReadOnlyISO):
		return nil, fmt.Errorf("%w; write a copy with -o FILE, or make it writable (chmod u+w) to edit it in place", err)
	}
	return iso, err
}

// openISOToCopy opens an ISO that the command only reads, waiting for an in-place edit of it
// to finish and holding off the next until the command ends: what it writes comes from one
// version of the ISO. An ISO named by URL is read through its origin, pinned to the version
// opened.
func openISOToCopy(c *cli.Context, path string) (*isobuilder.LiveISO, error) {
	if origin.IsURL(path) {
		return openOriginISO(c, path)
	}
	iso, err := isobuilder.OpenToCopy(c.Context, path, inPlaceLockWait)
	if errors.Is(err, isobuilder.ErrLocked) {
		return nil, fmt.Errorf("%w; wait for it to finish and run the command again", err)
	}
	return iso, err
}

// embedSecrets runs an edit that embeds what may hold secrets (an Ignition config's keys, a
// keyfile's Wi-Fi password) and, when it was made in place, warns if the ISO is readable by
// group or others: a copy written with -o is 0600, but the ISO edited in place keeps its mode.
func embedSecrets(c *cli.Context, isoPath, what string, edit func() error) error {
	if err := edit(); err != nil || !editsInPlace(c) {
		return err
	}
	if info, err := os.Stat(isoPath); err == nil && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s is readable by other users (mode %04o) and now holds %s; "+
			"restrict it with chmod 600 %s, or write a copy with -o FILE, which is 0600\n", isoPath, info.Mode().Perm(), what, isoPath)
	}
	return nil
}
