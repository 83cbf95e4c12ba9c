package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"
)

// sayWrote is the one rule for what a command that writes a file prints: a "Wrote PATH" line
// on standard error, so that standard output carries only data (the image with -o -, or what
// a command shows), through sno-iso and the coreos-installer drop-in alike. path is the file
// or directory written; "-" (standard output) is not announced. detail, when not "", follows
// the path and begins with its own separator (": ...", " (...)").
func sayWrote(c *cli.Context, path, detail string) {
	if path == "-" {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fmt.Fprintf(c.App.ErrWriter, "Wrote %s%s\n", path, detail)
}
