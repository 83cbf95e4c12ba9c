package main

import (
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
)

// Files that `sno-iso dev docs DIR` writes, named as man and each shell look for them.
const (
	manPageFile        = "sno-iso.1"
	bashCompletionFile = "sno-iso.bash"
	zshCompletionFile  = "_sno-iso"
	fishCompletionFile = "sno-iso.fish"
)

// docsCommand writes the man page and the shell completions from the command definitions, so
// that they list exactly the commands and options the binary has (make docs, the release).
func docsCommand() *cli.Command {
	return &cli.Command{
		Name:      "docs",
		Usage:     "write the man page and the bash, zsh and fish completions into DIR",
		ArgsUsage: "DIR",
		Action:    writeDocs,
	}
}

func writeDocs(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("dev docs takes the directory to write into")
	}
	dir := c.Args().First()
	stateMachineDefaults(c.App.Commands)
	man, err := c.App.ToManWithSection(1)
	if err != nil {
		return err
	}
	tree := commandTree(c.App)
	files := map[string]string{
		manPageFile:        man,
		bashCompletionFile: bashCompletion(tree),
		zshCompletionFile:  zshCompletion(tree),
		fishCompletionFile: fishCompletion(tree),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	sayWrote(c, dir, ": the man page and the bash, zsh and fish completions")
	return nil
}

// machineDefaults says how the docs state the defaults that --help works out on the running
// machine, so that the release's man page is the same bytes whoever builds it, and right for
// whoever reads it.
var machineDefaults = map[string]string{
	"arch": "this machine's architecture",
	"cache-dir": "sno-iso in the user cache directory: " +
		"$XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS, %LocalAppData% on Windows",
}

// stateMachineDefaults gives every flag of commands, at any depth, named in machineDefaults
// its machine-independent default text.
func stateMachineDefaults(commands []*cli.Command) {
	for _, cmd := range commands {
		for _, f := range cmd.Flags {
			if sf, ok := f.(*cli.StringFlag); ok {
				if text, ok := machineDefaults[sf.Name]; ok {
					sf.DefaultText = text
				}
			}
		}
		stateMachineDefaults(cmd.Subcommands)
	}
}
