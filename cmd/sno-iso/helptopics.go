package main

import (
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
)

// configTopic is the name under which `sno-iso help` describes sno.yaml, and its man page's.
const configTopic = "sno.yaml"

// configSummary says what sno.yaml is, for its help and its man page.
const configSummary = "sno.yaml holds one node's settings: how its live system installs it, its network, kernel arguments, " +
	"customizations, media and BMC. `sno-iso build --config sno.yaml` and `pxe build --config` read it; " +
	"`sno-iso serve` and `sno-iso bmc --node` read DIR/NODE/sno.yaml. Paths in it are relative to it. " +
	"Unknown or repeated keys are errors that give the line. A command-line option overrides the key it names."

// helpTopic is the text of `sno-iso help TOPIC` when args ask for a topic rather than a
// command: sno.yaml.
func helpTopic(args []string) (string, bool) {
	if len(args) != 3 || args[1] != "help" || args[2] != configTopic {
		return "", false
	}
	return configHelp(helpWidth), true
}

// configHelp lists every key of sno.yaml with its type, default, example and meaning.
func configHelp(width int) string {
	indent := strings.Repeat(" ", helpIndent)
	deeper := indent + "    "
	var b strings.Builder
	b.WriteString("NAME:\n" + indent + configTopic + " - the settings of one node for sno-iso\n\nDESCRIPTION:\n")
	b.WriteString(indent + strings.Join(wrapWords(configSummary, width-helpIndent), "\n"+indent) + "\n\nKEYS:\n")
	for _, k := range coreos.ConfigKeys {
		b.WriteString(indent + k.Key + "\n")
		for _, line := range keyLines(k) {
			b.WriteString(deeper + strings.Join(wrapWords(line, width-len(deeper)), "\n"+deeper+"  ") + "\n")
		}
	}
	b.WriteString("\nEXAMPLE:\n")
	for _, line := range strings.Split(strings.TrimSuffix(coreos.ConfigExample, "\n"), "\n") {
		b.WriteString(indent + line + "\n")
	}
	return b.String()
}

// keyLines describes one key: what it does, its type and default, and its example.
func keyLines(k coreos.KeyDoc) []string {
	lines := []string{k.Meaning, fmt.Sprintf("type: %s; default: %s", k.Type, k.Default)}
	if k.Example != "" {
		lines = append(lines, "example: "+keyExample(k))
	}
	return lines
}

// keyExample is the example as written in sno.yaml, under its own key.
func keyExample(k coreos.KeyDoc) string {
	name := k.Key[strings.LastIndex(k.Key, ".")+1:]
	return name + ": " + k.Example
}

// The exit codes of sno-iso and of its coreos-installer drop-in.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// exitCodes say what each exit code means, for the man page.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "success; wait: the node reached the phase --for names"},
	{exitFailed, "the work failed: an input could not be read or used, a download, the BMC or the output failed " +
		"(the error says which and what to do); wait: the node reported a failure or --timeout passed"},
	{exitUsage, "the command line or an input's settings were wrong: an unknown command or option, a bad value, " +
		"a required option missing, an NMState document, hostname or network keyfiles that cannot be used"},
}
