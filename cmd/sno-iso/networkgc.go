package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/nmstate"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func networkGCCommand() *cli.Command {
	return &cli.Command{
		Name: "gc",
		Usage: "write the NetworkManager keyfiles of NMState files or agent-config.yaml, as `nmstatectl gc` would, " +
			"without building anything",
		ArgsUsage: "FILE...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Value: ".",
				Usage: "write the keyfiles into `DIR` (created if needed)"},
			&cli.StringFlag{Name: "host", Usage: "the agent-config host `HOSTNAME` to take (default: its only host)"},
			forceFlag("replace existing keyfiles"),
		},
		Action: networkGC,
	}
}

// networkGC converts every file before writing any: a bad one leaves nothing written.
func networkGC(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("give the NMState or agent-config.yaml FILE to convert")
	}
	var docs []*nmstate.Document
	agentConfigs := 0
	for _, path := range c.Args().Slice() {
		if path == "-" {
			return usagef("%s reads files, not standard input; save it to a file and give its path", c.Command.HelpName)
		}
		data, err := node.ReadNMStateFile(path)
		if err != nil {
			return err
		}
		var doc *nmstate.Document
		if nmstate.IsAgentConfig(data) {
			agentConfigs++
			host, err := nmstate.ParseAgentConfig(path, data, c.String("host"))
			if err != nil {
				return err
			}
			if host.Network == nil {
				return usagef("%s: host %s has no networkConfig to convert", path, host.Hostname)
			}
			doc = host.Network
		} else if doc, err = nmstate.Parse(path, data); err != nil {
			return err
		}
		docs = append(docs, doc)
	}
	if c.IsSet("host") && agentConfigs == 0 {
		return usagef("--host chooses a host of an agent-config.yaml, and no FILE is one")
	}
	files, err := node.NMStateKeyfiles(docs)
	if err != nil {
		return err
	}
	dir := c.String("directory")
	written, err := isobuilder.WriteFiles(files, dir, c.Bool("force"), c.Args().Slice()...)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w; or pass -f to replace the keyfiles", err)
	}
	if err != nil {
		return err
	}
	printWritten(c, dir, written)
	return nil
}
