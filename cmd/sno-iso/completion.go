package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/download"
	"github.com/urfave/cli/v2"
)

// completionEntry is one visible command, named by its path below the program ("" for the
// program itself, "ignition embed"), with what may follow it.
type completionEntry struct {
	path        string
	subcommands []*cli.Command
	flags       []cli.Flag
}

// completionScript names what a completion script completes: the program, and the prefix of
// its shell functions.
type completionScript struct {
	prog, fn string
	tree     []completionEntry
}

func newCompletionScript(app *cli.App) completionScript {
	return completionScript{prog: app.Name, fn: "_" + strings.ReplaceAll(app.Name, "-", "_"), tree: commandTree(app)}
}

// expand fills a script template's {{prog}} and {{fn}}.
func (s completionScript) expand(template string) string {
	return strings.NewReplacer("{{prog}}", s.prog, "{{fn}}", s.fn).Replace(template)
}

// commandTree lists every visible command depth first, the program itself first.
func commandTree(app *cli.App) []completionEntry {
	root := completionEntry{
		subcommands: app.VisibleCommands(),
		flags:       withFlags(app.VisibleFlags(), cli.HelpFlag, cli.VersionFlag),
	}
	return append([]completionEntry{root}, subcommandTree("", app.VisibleCommands())...)
}

func subcommandTree(parent string, commands []*cli.Command) []completionEntry {
	var entries []completionEntry
	for _, cmd := range commands {
		e := completionEntry{
			path:        strings.TrimSpace(parent + " " + cmd.Name),
			subcommands: cmd.VisibleCommands(),
			flags:       withFlags(cmd.VisibleFlags(), cli.HelpFlag),
		}
		entries = append(entries, e)
		entries = append(entries, subcommandTree(e.path, e.subcommands)...)
	}
	return entries
}

// withFlags adds the flags that urfave/cli adds when a command runs, unless already there.
func withFlags(flags []cli.Flag, implicit ...cli.Flag) []cli.Flag {
	for _, f := range implicit {
		if !slices.ContainsFunc(flags, func(g cli.Flag) bool { return g.Names()[0] == f.Names()[0] }) {
			flags = append(flags, f)
		}
	}
	return flags
}

func (e completionEntry) subcommandNames() []string {
	var names []string
	for _, cmd := range e.subcommands {
		names = append(names, cmd.Name)
	}
	return names
}

// optionWords spells the flags' names as typed (--long, -s), sorted.
func (e completionEntry) optionWords() []string {
	var words []string
	for _, f := range e.flags {
		words = append(words, optionSpellings(f)...)
	}
	slices.Sort(words)
	return words
}

// optionSpellings are the words that name option f on a command line: --long, -s.
func optionSpellings(f cli.Flag) []string {
	var words []string
	for _, name := range f.Names() {
		words = append(words, optionName(name))
	}
	return words
}

// posixTables defines the three shell functions that bash and zsh share: the subcommands and
// the options of the command path given as $1, as one line of words, and what completes the
// value of the option $2 of that command (see valueCompletion).
func (s completionScript) posixTables() string {
	var b strings.Builder
	table := func(name string, words func(completionEntry) []string) {
		fmt.Fprintf(&b, "%s() {\n\tcase \"$1\" in\n", name)
		for _, e := range s.tree {
			if w := words(e); len(w) > 0 {
				fmt.Fprintf(&b, "\t%q) echo %q ;;\n", e.path, strings.Join(w, " "))
			}
		}
		b.WriteString("\tesac\n}\n\n")
	}
	table(s.fn+"_subcommands", completionEntry.subcommandNames)
	table(s.fn+"_options", completionEntry.optionWords)
	fmt.Fprintf(&b, "%s_values() {\n\tcase \"$1 $2\" in\n", s.fn)
	for _, e := range s.tree {
		for _, f := range e.flags {
			if v := valueCompletion(s.prog, e.path, f); v != "" {
				var cases []string
				for _, w := range optionSpellings(f) {
					cases = append(cases, fmt.Sprintf("%q", e.path+" "+w))
				}
				fmt.Fprintf(&b, "\t%s) echo %q ;;\n", strings.Join(cases, "|"), v)
			}
		}
	}
	b.WriteString("\tesac\n}\n\n")
	return b.String()
}

// The command path is the words before the cursor that name subcommands; a word is taken as
// a subcommand only where its parent has one of that name, so ISO paths and flag values are
// skipped. After an option that takes a value, the value table says what completes it. Where
// no word fits, the shell completes file names.
const bashCompletionBody = `{{fn}}() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmdpath="" i
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ " $({{fn}}_subcommands "$cmdpath") " == *" ${COMP_WORDS[i]} "* ]]; then
			cmdpath=${cmdpath:+$cmdpath }${COMP_WORDS[i]}
		fi
	done
	local words
	words=$({{fn}}_values "$cmdpath" "$prev")
	case $words in
	@dirs)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	@none)
		compopt +o default 2>/dev/null
		COMPREPLY=()
		return ;;
	@nodes)
		local nodes=.
		for ((i = 1; i < COMP_CWORD - 1; i++)); do
			[[ ${COMP_WORDS[i]} == --nodes ]] && nodes=${COMP_WORDS[i+1]}
		done
		COMPREPLY=($(cd "$nodes" 2>/dev/null && compgen -d -- "$cur"))
		return ;;
	?*)
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		words=$({{fn}}_options "$cmdpath")
	else
		words=$({{fn}}_subcommands "$cmdpath")
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

complete -o default -F {{fn}} {{prog}}
`

const zshCompletionBody = `{{fn}}() {
	local cmdpath="" i
	for ((i = 2; i < CURRENT; i++)); do
		if [[ " $({{fn}}_subcommands "$cmdpath") " == *" ${words[i]} "* ]]; then
			cmdpath=${cmdpath:+$cmdpath }${words[i]}
		fi
	done
	local -a candidates
	local values=$({{fn}}_values "$cmdpath" "${words[CURRENT-1]}")
	case $values in
	@dirs)
		_files -/
		return ;;
	@none)
		return 0 ;;
	@nodes)
		local nodes=.
		for ((i = 2; i < CURRENT - 1; i++)); do
			[[ ${words[i]} == --nodes ]] && nodes=${words[i+1]}
		done
		candidates=($nodes/*(N/:t))
		compadd -- $candidates
		return ;;
	?*)
		compadd -- ${=values}
		return ;;
	esac
	if [[ ${words[CURRENT]} == -* ]]; then
		candidates=(${=$({{fn}}_options "$cmdpath")})
	else
		candidates=(${=$({{fn}}_subcommands "$cmdpath")})
	fi
	if (( ${#candidates} )); then
		compadd -- $candidates
	else
		_files
	fi
}

{{fn}} "$@"
`

func (s completionScript) bash() string {
	return s.expand("# bash completion for {{prog}}, generated from its command definitions by `sno-iso dev docs`.\n"+
		"# Install as /usr/share/bash-completion/completions/{{prog}} or source it.\n\n") +
		s.posixTables() + s.expand(bashCompletionBody)
}

func (s completionScript) zsh() string {
	return s.expand("#compdef {{prog}}\n"+
		"# zsh completion for {{prog}}, generated from its command definitions by `sno-iso dev docs`.\n"+
		"# Install as _{{prog}} in a directory of $fpath.\n\n") +
		s.posixTables() + s.expand(zshCompletionBody)
}

// The fish script finds the command path as the bash one does, then offers each command's
// subcommands and options with their descriptions, and the values of options that have a
// known set; files only where no subcommand is due.
const fishCompletionHead = `# fish completion for {{prog}}, generated from its command definitions by ` + "`sno-iso dev docs`" + `.
# Install as ~/.config/fish/completions/{{prog}}.fish or in /usr/share/fish/vendor_completions.d.

function {{fn}}_cmdpath
	set -l words (commandline -opc)
	set -e words[1]
	set -l cmdpath ''
	for word in $words
		if contains -- $word ({{fn}}_subcommands $cmdpath)
			set cmdpath (string trim -- "$cmdpath $word")
		end
	end
	echo $cmdpath
end

function {{fn}}_at
	test "$({{fn}}_cmdpath)" = "$argv[1]"
end

# The node directories of the --nodes given before, or of the working directory.
function {{fn}}_nodes
	set -l words (commandline -opc)
	set -l nodes .
	for i in (seq (count $words))
		if test "$words[$i]" = --nodes; and test $i -lt (count $words)
			set nodes $words[(math $i + 1)]
		end
	end
	for d in $nodes/*/
		basename $d
	end
end

`

func (s completionScript) fish() string {
	var b strings.Builder
	b.WriteString(s.expand(fishCompletionHead))
	b.WriteString(s.expand("function {{fn}}_subcommands\n\tswitch \"$argv[1]\"\n"))
	for _, e := range s.tree {
		if len(e.subcommands) > 0 {
			fmt.Fprintf(&b, "\t\tcase %s\n\t\t\tprintf '%%s\\n' %s\n", fishQuote(e.path), strings.Join(e.subcommandNames(), " "))
		}
	}
	b.WriteString("\tend\nend\n")
	for _, e := range s.tree {
		at := fishQuote(s.fn + "_at " + fishQuote(e.path))
		fmt.Fprintf(&b, "\n# %s\n", strings.TrimSpace(s.prog+" "+e.path))
		if len(e.subcommands) > 0 {
			fmt.Fprintf(&b, "complete -c %s -n %s -f\n", s.prog, at)
		}
		for _, cmd := range e.subcommands {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", s.prog, at, cmd.Name, fishQuote(cmd.Usage))
		}
		for _, f := range e.flags {
			fmt.Fprintf(&b, "complete -c %s -n %s%s%s\n", s.prog, at, fishOption(f), s.fishValues(e.path, f))
		}
	}
	return b.String()
}

// fishValues is the part of a fish complete command that offers the values of flag f.
func (s completionScript) fishValues(path string, f cli.Flag) string {
	switch v := valueCompletion(s.prog, path, f); v {
	case "":
		return ""
	case "@dirs":
		return " -x -a '(__fish_complete_directories)'"
	case "@none":
		return " -x"
	case "@nodes":
		return " -x -a " + fishQuote("("+s.fn+"_nodes)")
	default:
		return " -x -a " + fishQuote(v)
	}
}

// fishOption is the part of a fish complete command that describes flag f.
func fishOption(f cli.Flag) string {
	var b strings.Builder
	for _, name := range f.Names() {
		if len(name) == 1 {
			fmt.Fprintf(&b, " -s %s", name)
		} else {
			fmt.Fprintf(&b, " -l %s", name)
		}
	}
	if doc, ok := f.(cli.DocGenerationFlag); ok {
		if doc.TakesValue() {
			b.WriteString(" -r")
		}
		// urfave/cli marks the value's placeholder with backquotes in usage texts.
		fmt.Fprintf(&b, " -d %s", fishQuote(strings.ReplaceAll(doc.GetUsage(), "`", "")))
	}
	return b.String()
}

// fishQuote quotes s for fish, in which a single-quoted string escapes only \ and '.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Values that options take, shared by the commands that take them and by --help's checks.
var (
	streamArches = []string{"x86_64", "aarch64", "s390x", "ppc64le"}
	bootModes    = []string{"uefi", "legacy"}
	logFormats   = []string{"text", "json"}
	// metalDiskFormats are the disk images of a stream's metal platform, which the drop-in's
	// download fetches as coreos-installer does.
	metalDiskFormats = []string{"raw.xz", "4k.raw.xz"}
)

// valueCompletion is what completes the value of option f of the command at path of prog:
// its values as one line of words; @dirs for a directory; @nodes for a node's name, one of
// the directories of --nodes; @none for a value that no name on disk completes (a URL, a
// duration); "" for file names.
func valueCompletion(prog, path string, f cli.Flag) string {
	doc, ok := f.(cli.DocGenerationFlag)
	if !ok || !doc.TakesValue() {
		return ""
	}
	// urfave/cli takes the value's placeholder from between backquotes in the usage.
	_, placeholder, _ := strings.Cut(doc.GetUsage(), "`")
	placeholder, _, _ = strings.Cut(placeholder, "`")
	switch name := f.Names()[0]; {
	case name == "arch" || name == "architecture":
		return strings.Join(streamArches, " ")
	case name == "format" && prog == dropInName:
		return strings.Join(append([]string{download.FormatISO, download.FormatPXE}, metalDiskFormats...), " ")
	case name == "format":
		return download.FormatISO + " " + download.FormatPXE
	case name == "stream" && prog == dropInName:
		return strings.Join(download.FedoraStreams, " ")
	case name == "boot-mode":
		return strings.Join(bootModes, " ")
	case name == "log-format":
		return strings.Join(logFormats, " ")
	case name == "role":
		return coreos.RoleMaster + " " + coreos.RoleWorker
	case name == "for":
		return strings.ReplaceAll(waitPhaseList(), ", ", " ")
	case name == "node" && path == "serve urls":
		return "@nodes"
	case name == "node", name == "directory", name == "output-dir", placeholder == "DIR":
		return "@dirs"
	case slices.Contains(notFilePlaceholders, placeholder):
		return "@none"
	}
	return ""
}

// notFilePlaceholders name option values that are never a file: no file names are offered
// for them.
var notFilePlaceholders = []string{"URL", "s3://BUCKET/KEY", "ADDRESS", "HOSTNAME", "ID", "KARG", "KEY=OLD=NEW", "arg", "spec",
	"DURATION", "SIZE", "N", "HEX", "REGION", "NAME"}
