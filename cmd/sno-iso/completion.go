package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionEntry is one visible command, named by its path below sno-iso ("" for sno-iso
// itself, "ignition embed"), with what may follow it.
type completionEntry struct {
	path        string
	subcommands []*cli.Command
	flags       []cli.Flag
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
		for _, name := range f.Names() {
			if len(name) == 1 {
				words = append(words, "-"+name)
			} else {
				words = append(words, "--"+name)
			}
		}
	}
	slices.Sort(words)
	return words
}

// posixTables defines the two shell functions that bash and zsh share: the subcommands and
// the options of the command path given as $1, as one line of words.
func posixTables(tree []completionEntry) string {
	var b strings.Builder
	table := func(name string, words func(completionEntry) []string) {
		fmt.Fprintf(&b, "%s() {\n\tcase \"$1\" in\n", name)
		for _, e := range tree {
			if w := words(e); len(w) > 0 {
				fmt.Fprintf(&b, "\t%q) echo %q ;;\n", e.path, strings.Join(w, " "))
			}
		}
		b.WriteString("\tesac\n}\n\n")
	}
	table("_sno_iso_subcommands", completionEntry.subcommandNames)
	table("_sno_iso_options", completionEntry.optionWords)
	return b.String()
}

// The command path is the words before the cursor that name subcommands; a word is taken as
// a subcommand only where its parent has one of that name, so ISO paths and flag values are
// skipped. Where no word fits, the shell completes file names.
const bashCompletionBody = `_sno_iso() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmdpath="" i
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ " $(_sno_iso_subcommands "$cmdpath") " == *" ${COMP_WORDS[i]} "* ]]; then
			cmdpath=${cmdpath:+$cmdpath }${COMP_WORDS[i]}
		fi
	done
	local words
	if [[ $cur == -* ]]; then
		words=$(_sno_iso_options "$cmdpath")
	else
		words=$(_sno_iso_subcommands "$cmdpath")
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

complete -o default -F _sno_iso sno-iso
`

const zshCompletionBody = `_sno_iso() {
	local cmdpath="" i
	for ((i = 2; i < CURRENT; i++)); do
		if [[ " $(_sno_iso_subcommands "$cmdpath") " == *" ${words[i]} "* ]]; then
			cmdpath=${cmdpath:+$cmdpath }${words[i]}
		fi
	done
	local -a candidates
	if [[ ${words[CURRENT]} == -* ]]; then
		candidates=(${=$(_sno_iso_options "$cmdpath")})
	else
		candidates=(${=$(_sno_iso_subcommands "$cmdpath")})
	fi
	if (( ${#candidates} )); then
		compadd -- $candidates
	else
		_files
	fi
}

_sno_iso "$@"
`

func bashCompletion(tree []completionEntry) string {
	return "# bash completion for sno-iso, generated from its command definitions by `sno-iso dev docs`.\n" +
		"# Install as /usr/share/bash-completion/completions/sno-iso or source it.\n\n" +
		posixTables(tree) + bashCompletionBody
}

func zshCompletion(tree []completionEntry) string {
	return "#compdef sno-iso\n" +
		"# zsh completion for sno-iso, generated from its command definitions by `sno-iso dev docs`.\n" +
		"# Install as _sno-iso in a directory of $fpath.\n\n" +
		posixTables(tree) + zshCompletionBody
}

// The fish script finds the command path as the bash one does, then offers each command's
// subcommands and options with their descriptions; files only where no subcommand is due.
const fishCompletionHead = `# fish completion for sno-iso, generated from its command definitions by ` + "`sno-iso dev docs`" + `.
# Install as ~/.config/fish/completions/sno-iso.fish or in /usr/share/fish/vendor_completions.d.

function __sno_iso_cmdpath
	set -l words (commandline -opc)
	set -e words[1]
	set -l cmdpath ''
	for word in $words
		if contains -- $word (__sno_iso_subcommands $cmdpath)
			set cmdpath (string trim -- "$cmdpath $word")
		end
	end
	echo $cmdpath
end

function __sno_iso_at
	test "$(__sno_iso_cmdpath)" = "$argv[1]"
end

`

func fishCompletion(tree []completionEntry) string {
	var b strings.Builder
	b.WriteString(fishCompletionHead)
	b.WriteString("function __sno_iso_subcommands\n\tswitch \"$argv[1]\"\n")
	for _, e := range tree {
		if len(e.subcommands) > 0 {
			fmt.Fprintf(&b, "\t\tcase %s\n\t\t\tprintf '%%s\\n' %s\n", fishQuote(e.path), strings.Join(e.subcommandNames(), " "))
		}
	}
	b.WriteString("\tend\nend\n")
	for _, e := range tree {
		at := fishQuote("__sno_iso_at " + fishQuote(e.path))
		fmt.Fprintf(&b, "\n# %s\n", strings.TrimSpace("sno-iso "+e.path))
		if len(e.subcommands) > 0 {
			fmt.Fprintf(&b, "complete -c sno-iso -n %s -f\n", at)
		}
		for _, cmd := range e.subcommands {
			fmt.Fprintf(&b, "complete -c sno-iso -n %s -a %s -d %s\n", at, cmd.Name, fishQuote(cmd.Usage))
		}
		for _, f := range e.flags {
			fmt.Fprintf(&b, "complete -c sno-iso -n %s%s\n", at, fishOption(f))
		}
	}
	return b.String()
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
