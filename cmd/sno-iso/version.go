package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// The Makefile and scripts/release set these with -ldflags "-X main.buildVersion=... -X
// main.buildCommit=...": git describe and the commit it names. go install leaves them empty.
var (
	buildVersion string
	buildCommit  string
)

// version is the release this binary was built as: git describe when built by make, else
// the module version that go install or go build recorded.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// commit is the source commit, marked -dirty when built from a modified tree, or "" when
// unknown (go install of a module version builds from the module zip, not a checkout).
func commit() string {
	if buildCommit != "" {
		return buildCommit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" && modified == "true" {
		return revision + "-dirty"
	}
	return revision
}

// versionLine is what --version prints after the program name: the version, the commit
// and the Go release that built it, which together say what to report in an issue.
func versionLine() string {
	return fmt.Sprintf("%s (%s)", version(), buildDetail())
}

// dropInVersionLine is what coreos-installer -V prints: the program name and the version, as
// clap prints them for scripts that take the second word, then what sno-iso adds.
func dropInVersionLine() string {
	return fmt.Sprintf("%s %s (sno-iso, %s)", dropInName, version(), buildDetail())
}

// buildDetail is the commit, when known, and the Go release that built the binary.
func buildDetail() string {
	if c := commit(); c != "" {
		return fmt.Sprintf("commit %s, %s", c, runtime.Version())
	}
	return runtime.Version()
}

// versionCommand is `sno-iso version`, which prints what --version prints: many tools
// (kubectl, oc, openshift-install) spell it as a command.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, as --version does",
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usagef("version takes no arguments, got %q", c.Args().Slice())
			}
			cli.VersionPrinter(c)
			return nil
		},
	}
}
