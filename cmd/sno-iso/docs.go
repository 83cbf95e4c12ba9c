package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/urfave/cli/v2"
)

// Files that `sno-iso dev docs DIR` writes, named as man and each shell look for them.
const (
	manPageFile        = "sno-iso.1"
	configManPageFile  = "sno.yaml.5"
	bashCompletionFile = "sno-iso.bash"
	zshCompletionFile  = "_sno-iso"
	fishCompletionFile = "sno-iso.fish"
	// The completions of the coreos-installer link (make install COREOS_INSTALLER_LINK=1).
	dropInBashCompletionFile = "coreos-installer.bash"
	dropInZshCompletionFile  = "_coreos-installer"
	dropInFishCompletionFile = "coreos-installer.fish"
)

// docsCommand writes the man page and the shell completions from the command definitions, so
// that they list exactly the commands and options the binary has (make docs, the release).
func docsCommand() *cli.Command {
	return &cli.Command{
		Name:      "docs",
		Usage:     "write the man pages and the bash, zsh and fish completions into DIR",
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
	dropIn := newDropInApp(nil, io.Discard, io.Discard)
	snoCompletion, dropInCompletion := newCompletionScript(c.App), newCompletionScript(dropIn)
	files := map[string]string{
		manPageFile:              man + manSections(c.App, dropIn),
		configManPageFile:        configManPage(),
		bashCompletionFile:       snoCompletion.bash(),
		zshCompletionFile:        snoCompletion.zsh(),
		fishCompletionFile:       snoCompletion.fish(),
		dropInBashCompletionFile: dropInCompletion.bash(),
		dropInZshCompletionFile:  dropInCompletion.zsh(),
		dropInFishCompletionFile: dropInCompletion.fish(),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	sayWrote(c, dir, ": the man pages and the bash, zsh and fish completions")
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

// roff escapes text for a man page: backslashes, and a control character at a line's start.
func roff(text string) string {
	text = strings.ReplaceAll(text, `\`, `\e`)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffCode escapes a command line for a man page, with its dashes as the minus sign that a
// terminal shows and copies as "-" (a plain "-" may render as a hyphen, U+2010).
func roffCode(text string) string {
	return strings.ReplaceAll(roff(text), "-", `\-`)
}

// manSections are the sections of sno-iso.1 after its commands: EXIT STATUS, ENVIRONMENT,
// FILES, EXAMPLES of every command of app and of the drop-in, and SEE ALSO.
func manSections(app, dropIn *cli.App) string {
	var b strings.Builder
	b.WriteString("\n.SH EXIT STATUS\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, ".TP\n\\fB%d\\fP\n%s\n", e.code, roff(e.meaning))
	}
	b.WriteString("\n.SH ENVIRONMENT\n")
	for _, v := range environment {
		var readers []string
		for _, a := range []*cli.App{app, dropIn} {
			for _, name := range helpNames(a)[1:] {
				if cmd := commandNamed(a, name); cmd != nil && v.readBy(cmd) {
					readers = append(readers, strings.TrimPrefix(name, app.Name+" "))
				}
			}
		}
		if len(readers) > 0 {
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s.\nRead by: %s.\n", v.name, roff(v.meaning), roff(strings.Join(readers, ", ")))
		}
	}
	b.WriteString("\n.SH FILES\n")
	for _, f := range manFiles() {
		fmt.Fprintf(&b, ".TP\n\\fI%s\\fP\n%s\n", roff(f[0]), roff(f[1]))
	}
	b.WriteString("\n.SH EXAMPLES\n")
	for _, a := range []*cli.App{app, dropIn} {
		if a == dropIn {
			b.WriteString(".PP\nThrough a link named coreos-installer, sno-iso takes coreos-installer's command lines:\n")
		}
		for _, name := range helpNames(a) {
			fmt.Fprintf(&b, ".SS %s\n", roff(name))
			for _, e := range examples[name] {
				fmt.Fprintf(&b, ".PP\n%s:\n.EX\n%s\n.EE\n", roff(e.does), roffCode(e.line))
			}
		}
	}
	b.WriteString("\n.SH SEE ALSO\n\\fBsno.yaml\\fP(5), \\fBcoreos-installer\\fP(8), \\fBopenshift-install\\fP(1)\n")
	return b.String()
}

// commandNamed is the command of app whose help name is name, or nil.
func commandNamed(app *cli.App, name string) *cli.Command {
	words := strings.Fields(strings.TrimPrefix(name, app.Name+" "))
	commands := app.Commands
	var cmd *cli.Command
	for _, w := range words {
		if cmd = findCommand(commands, w); cmd == nil {
			return nil
		}
		commands = cmd.Subcommands
	}
	return cmd
}

// manFiles are the files sno-iso reads and writes by default, with what they hold.
func manFiles() [][2]string {
	return [][2]string{
		{"$XDG_CACHE_HOME/sno-iso/, ~/.cache/sno-iso/", "the download cache (--cache-dir): one directory per artifact's sha256; " +
			"~/Library/Caches/sno-iso on macOS, %LocalAppData%\\sno-iso on Windows"},
		{"NODES/" + capability.SecretFileName, "the secret of a nodes directory's capability URLs, created 0600 by sno-iso serve " +
			"(or rotate-secret) when missing; --secret-file names another, which is never written"},
		{"NODES/NODE/" + nodedir.IgnitionFile, "a node's bootstrap-in-place config (openshift-install create single-node-ignition-config)"},
		{"NODES/NODE/" + nodedir.ConfigFile, "a node's settings, optional: see sno.yaml(5)"},
		{"NODES/NODE/" + nodedir.NMStateFile, "a node's network as an NMState document, optional"},
		{"NODES/NODE/" + nodedir.AgentConfigFile, "a node's network and disk from the agent-based installer's agent-config.yaml " +
			"(one host), optional"},
	}
}

// configManPage is sno.yaml.5: every key of sno.yaml, from coreos.ConfigKeys.
func configManPage() string {
	var b strings.Builder
	b.WriteString(".nh\n.ad l\n.TH sno.yaml 5\n\n.SH NAME\nsno.yaml \\- the settings of one node for sno-iso\n\n.SH DESCRIPTION\n")
	b.WriteString(roff(configSummary) + "\n.PP\n`sno-iso help sno.yaml` prints this page.\n\n.SH KEYS\n")
	for _, k := range coreos.ConfigKeys {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n", roff(k.Key))
		for i, line := range keyLines(k) {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(roff(line) + "\n")
		}
	}
	fmt.Fprintf(&b, "\n.SH EXAMPLE\n.EX\n%s.EE\n\n.SH SEE ALSO\n\\fBsno-iso\\fP(1)\n", roff(coreos.ConfigExample))
	return b.String()
}
