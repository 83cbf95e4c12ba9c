package main

import (
	"bytes"
	"fmt"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func machineconfigCommand() *cli.Command {
	return &cli.Command{
		Name:      "machineconfig",
		Usage:     "turn the customizations of a pointer Ignition config into openshift-install's MachineConfig",
		ArgsUsage: "USER.ign",
		Description: "Writes the MachineConfig 99-installer-ignition-ROLE that openshift-install makes of an edited\n" +
			"master.ign or worker.ign: the user's config without its ignition.config merge or replace source,\n" +
			"so that the Machine Config Operator knows and keeps the customizations. It is written only when\n" +
			"USER.ign means something else than the base: key order, whitespace, the spec version, the order\n" +
			"of files or units and the spelling of data URLs are not customizations. Without --base the base\n" +
			"is an empty config, so any content counts. spec.config takes a spec version the MCO reads\n" +
			"(3.0 is translated to 3.1; 3.5 goes down to 3.4 unless it uses what 3.4 lacks).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", Usage: "the machine config pool `ROLE`: master or worker", Required: true},
			&cli.StringFlag{Name: "base", Usage: "the default pointer config `FILE` that USER.ign was edited from"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the manifest to `FILE` (default: standard output)"},
			forceFlag("replace an existing output file"),
		},
		Action: machineconfig,
	}
}

func machineconfig(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("machineconfig takes exactly one Ignition config argument, got %d (see --help)", c.NArg())
	}
	role := c.String("role")
	if role != coreos.RoleMaster && role != coreos.RoleWorker {
		return usagef("--role %q: give master or worker", role)
	}
	userPath := c.Args().First()
	user, err := input.ReadFile(userPath, coreos.MaxIgnitionSize, "an Ignition config")
	if err != nil {
		return err
	}
	var base []byte
	basePath := c.String("base")
	if basePath != "" {
		if base, err = input.ReadFile(basePath, coreos.MaxIgnitionSize, "an Ignition config"); err != nil {
			return err
		}
	}
	mc, warnings, err := coreos.PointerCustomization(role, user, base)
	if err != nil {
		return fmt.Errorf("%s: %w", userPath, err)
	}
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", userPath, w)
	}
	if mc == nil {
		than := "an empty config"
		if basePath != "" {
			than = basePath
		}
		fmt.Fprintf(c.App.ErrWriter, "nothing was customized: %s adds nothing to %s that a MachineConfig can carry; "+
			"no MachineConfig written\n", userPath, than)
		return nil
	}
	manifest, err := mc.YAML()
	if err != nil {
		return err
	}
	out := c.String("output")
	if out == "" || out == "-" {
		if err := refuseStdoutInput(c, commandInputs(c, userPath)); err != nil {
			return err
		}
		_, err := c.App.Writer.Write(manifest)
		return err
	}
	img, err := isobuilder.NewImage(bytes.NewReader(manifest), int64(len(manifest)))
	if err != nil {
		return err
	}
	o := isobuilder.Output{File: out, Force: c.Bool("force"), Keep: commandInputs(c, userPath)}
	if err := o.Write(c.Context, img); err != nil {
		return forceAdvice(err)
	}
	sayWrote(c, out, fmt.Sprintf(": MachineConfig %s (Ignition %s); "+
		"put it in the openshift/ directory of `openshift-install create manifests`", mc.Name, mc.IgnitionVersion))
	return nil
}
