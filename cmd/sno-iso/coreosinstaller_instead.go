package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// What to run instead of each coreos-installer command that the drop-in does not provide:
// lines of fewer than 100 columns, naming the sno-iso command that does the job. The commands
// this drop-in provides are spelt as coreos-installer's, as spellCommands would spell them.
var (
	installInstead = []string{
		"sno-iso does not write a disk from a running system; it makes the media that do:",
		"  sno-iso build --iso ISO --ignition IGN --installation-disk DEV   # an ISO that installs",
		"  sno-iso pxe build --iso ISO --ignition IGN --installation-disk DEV -o DIR   # PXE files",
		"To install from a running system, run coreos-installer itself.",
	}
	listStreamInstead = []string{
		"The stream of an OpenShift release is what `openshift-install coreos print-stream-json`",
		"prints; `sno-iso download --stream STREAM` fetches its ISO or PXE files.",
	}
	pxeNetworkInstead = []string{
		"sno-iso pxe build --network-keyfile FILE puts keyfiles in the PXE files it makes;",
		"coreos-installer iso network embed -k FILE ISO puts them in an ISO.",
	}
	packInstead = []string{
		"pack builds CoreOS images, which sno-iso does not; run coreos-installer itself.",
	}
	devInstead = []string{
		"sno-iso inspect ISO shows an ISO's embed areas, kernel arguments and contents;",
		"for anything else, run coreos-installer itself.",
	}
)

// notProvided stands for a coreos-installer command that the drop-in does not provide,
// saying so and what to run instead. It fails with exit code 1, not the usage error's 2: the
// command line is a valid one for coreos-installer, so a script must not read it as its own
// mistake, yet must stop as it would when coreos-installer cannot do the work.
func notProvided(name string, instead ...string) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           "not provided by sno-iso; see what to run instead",
		Hidden:          true,
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *cli.Context) error {
			return fmt.Errorf("`%s` is not provided by sno-iso's coreos-installer drop-in.\n%s",
				c.Command.HelpName, strings.Join(instead, "\n"))
		},
	}
}
