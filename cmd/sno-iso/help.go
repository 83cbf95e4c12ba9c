package main

import (
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// helpWidth is the widest line --help prints: it reads in a terminal of 100 columns.
const helpWidth = 100

// Option lists: names from column 3, usages from usageColumn or, under names too long for
// it, on the next lines.
const (
	helpIndent  = 3
	usageColumn = helpIndent + 30
)

func init() {
	cli.HelpPrinter = printHelp
}

// printHelp is urfave/cli's help printer with every paragraph wrapped at helpWidth and the
// options laid out by optionList, whose usages urfave/cli would leave unwrapped, followed by
// the variables the command reads and its examples.
func printHelp(w io.Writer, templ string, data any) {
	templ = strings.ReplaceAll(templ, `{{template "visibleFlagTemplate" .}}`, `{{optionList .VisibleFlags}}`)
	cli.HelpPrinterCustom(w, templ, data, map[string]any{
		"wrapAt":     func() int { return helpWidth },
		"optionList": optionList,
	})
	if cmd, ok := data.(*cli.Command); ok {
		io.WriteString(w, environmentSection(cmd, helpWidth))
	}
	io.WriteString(w, exampleSection(helpName(data), helpWidth))
}

// optionList lays out options in two columns, each usage wrapped to fit helpWidth.
func optionList(flags []cli.Flag) string {
	nameWidth := 0
	for _, f := range flags {
		names, _, _ := strings.Cut(f.String(), "\t")
		if n := helpIndent + len(names) + 2; n <= usageColumn {
			nameWidth = max(nameWidth, len(names))
		}
	}
	column := helpIndent + nameWidth + 2
	indent := strings.Repeat(" ", column)
	var b strings.Builder
	for _, f := range flags {
		names, usage, _ := strings.Cut(f.String(), "\t")
		b.WriteString("\n" + strings.Repeat(" ", helpIndent) + names)
		lines := wrapWords(usage, helpWidth-column)
		if len(names) > nameWidth {
			b.WriteString("\n" + indent)
		} else {
			b.WriteString(strings.Repeat(" ", column-helpIndent-len(names)))
		}
		b.WriteString(strings.Join(lines, "\n"+indent))
	}
	return b.String()
}

// wrapWords breaks text into lines of at most width bytes, between words; a longer word has a
// line of its own.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// setDefaultTexts makes the defaults that --help prints short and true: none for an option
// that is off unless given (its usage says what it turns on), 1m rather than 1m0s. Options
// whose default depends on other inputs say so in their own DefaultText, which stays.
func setDefaultTexts(commands []*cli.Command) {
	for _, c := range commands {
		for _, f := range c.Flags {
			switch f := f.(type) {
			case *cli.BoolFlag:
				if f.DefaultText == "" && !f.Value {
					f.DisableDefaultText = true
				}
			case *cli.DurationFlag:
				if f.DefaultText == "" {
					f.DefaultText = shortDuration(f.Value)
				}
			}
		}
		setDefaultTexts(c.Subcommands)
	}
}

// shortDuration writes d without its zero minutes and seconds, as a user would: 1m, 1h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
