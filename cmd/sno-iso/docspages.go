package main

import (
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/urfave/cli/v2"
)

// The pages of docs/ generated from the tables that --help reads: the examples of every
// command and the keys of sno.yaml. A test keeps the committed pages equal to these.
const (
	examplesPage = "examples.md"
	configPage   = "sno-yaml.md"
)

// generatedNote says where a generated page comes from and how to write it again.
const generatedNote = "<!-- Generated from %s by `go test ./cmd/sno-iso -run TestGeneratedDocs -update-docs`: " +
	"edit that, not this page. -->\n\n"

// needsText says what an example needs besides files, for the examples page.
var needsText = map[exampleNeed]string{
	needsNetwork: "needs the network",
	needsBMC:     "needs a BMC",
	needsNode:    "needs a node booting the media",
	needsServer:  "runs until stopped",
}

// examplesMarkdown lists the examples of every command of the apps, in their order.
func examplesMarkdown(apps ...*cli.App) string {
	var b strings.Builder
	fmt.Fprintf(&b, generatedNote, "cmd/sno-iso/examples.go")
	b.WriteString("# Examples\n\nEvery command's examples, as its `--help` and `man sno-iso` show them. The tests run each one\n" +
		"that needs no network, BMC, booting node or long-running server, in a directory holding the\nfiles it names.\n")
	for _, app := range apps {
		if app.Name == dropInName {
			b.WriteString("\nThrough a link named `coreos-installer`, sno-iso takes coreos-installer's command lines\n" +
				"([coreos-installer.md](coreos-installer.md)):\n")
		}
		for _, name := range helpNames(app) {
			fmt.Fprintf(&b, "\n## %s\n", name)
			for _, e := range examples[name] {
				note := ""
				if text, ok := needsText[e.needs]; ok {
					note = " (" + text + ")"
				}
				fmt.Fprintf(&b, "\n%s%s:\n\n```sh\n%s\n```\n", upperFirst(e.does), note, e.line)
			}
		}
	}
	return b.String()
}

// configMarkdown is the table of sno.yaml's keys.
func configMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, generatedNote, "coreos/configdoc.go")
	b.WriteString("# sno.yaml keys\n\n" + configSummary + " `sno-iso help sno.yaml` and `man sno.yaml` show the same;\n" +
		"[building.md](building.md#snoyaml) explains the settings at length.\n\n")
	b.WriteString("| key | type | default | example | meaning |\n|---|---|---|---|---|\n")
	cell := strings.NewReplacer("|", `\|`).Replace
	for _, k := range coreos.ConfigKeys {
		example := ""
		if k.Example != "" {
			example = "`" + keyExample(k) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, cell(k.Type), cell(k.Default), cell(example), cell(k.Meaning))
	}
	b.WriteString("\nA typical file:\n\n```yaml\n" + coreos.ConfigExample + "```\n")
	return b.String()
}

// upperFirst capitalizes the first letter of a sentence.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
