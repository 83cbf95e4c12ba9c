package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/safetext"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/urfave/cli/v2"
)

func waitCommand() *cli.Command {
	var phases []string
	for _, p := range reports.WaitPhases {
		phases = append(phases, string(p))
	}
	return &cli.Command{
		Name:      "wait",
		Usage:     "follow a node's install reports until it reaches a phase",
		UsageText: "sno-iso wait --node DIR --for " + strings.Join(phases, "|") + " [--timeout 90m] [--serve-url URL]",
		Description: "Prints each phase the node reports as it comes, and exits 0 once the node reached the phase\n" +
			"--for names. Exits 1 with the failing unit, its exit status and the last lines of its journal\n" +
			"when the node reports a failure, or when --timeout passes first. The reports are those sno-iso\n" +
			"serve records for the nodes directory that holds DIR, read from its files, or asked of the\n" +
			"server at --serve-url. See docs/progress.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "node", Usage: "the node's `DIR`, in the nodes directory sno-iso serve serves"},
			&cli.StringFlag{Name: "for", Usage: "the `PHASE` to wait for: " + strings.Join(phases, ", ")},
			&cli.DurationFlag{Name: "timeout", Value: 90 * time.Minute, Usage: "give up after `DURATION`"},
			&cli.StringFlag{Name: "serve-url", Usage: "ask the sno-iso serve at `URL` instead of reading its files"},
			secretFileFlag(),
			&cli.DurationFlag{Name: "interval", Value: 2 * time.Second, Usage: "look for new reports every `DURATION`"},
		},
		Action: waitAction,
	}
}

func waitAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("wait takes no arguments, got %q", c.Args().Slice())
	}
	if !c.IsSet("node") || !c.IsSet("for") {
		return usagef("%s needs --node and --for (see --help)", c.Command.HelpName)
	}
	target, err := reports.ParsePhase(c.String("for"))
	if err != nil || target == reports.Failed {
		return usagef("--for %q: wait for one of %s", c.String("for"), waitPhaseList())
	}
	if c.Duration("timeout") <= 0 || c.Duration("interval") <= 0 {
		return usagef("--timeout and --interval must be positive")
	}
	return followNode(c, c.String("node"), target, c.Duration("timeout"), c.Duration("interval"))
}

// followNode prints the phases the node in dir reports until it reaches target (nil), reports
// a failure or timeout passes (an error, after the failing unit's journal).
func followNode(c *cli.Context, nodeDir string, target reports.Phase, timeout, interval time.Duration) error {
	dir, err := filepath.Abs(nodeDir)
	if err != nil {
		return err
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("--node %s is not a node's directory: give the directory sno-iso serve serves the node from", nodeDir)
	}
	nodesDir, name := filepath.Dir(dir), filepath.Base(dir)
	records, where, err := reportSource(c, nodesDir, name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, timeout)
	defer cancel()
	fmt.Fprintf(c.App.ErrWriter, "Waiting up to %s for node %s to reach %s (reports from %s)\n", shortDuration(timeout), name, target, where)
	var lastProblem string
	rec, err := reports.Wait(ctx, records, target, interval,
		func(r reports.Record) { fmt.Fprintf(c.App.Writer, "%s %s\n", name, r) },
		func(err error) {
			if msg := err.Error(); msg != lastProblem {
				lastProblem = msg
				fmt.Fprintf(c.App.ErrWriter, "Cannot read the reports yet: %v\n", err)
			}
		})
	var failed *reports.FailedError
	var timedOut *reports.TimeoutError
	switch {
	case errors.As(err, &failed):
		if rec.Log != "" {
			// The records may come from an impostor server: each line reaches the terminal escaped.
			fmt.Fprintf(c.App.ErrWriter, "The last lines of %s's journal:\n", safetext.Escape(orUnknown(rec.Unit)))
			for _, line := range strings.Split(strings.TrimRight(rec.Log, "\n"), "\n") {
				fmt.Fprintf(c.App.ErrWriter, "  | %s\n", safetext.Escape(line))
			}
		}
		return fmt.Errorf("node %s: %w", name, err)
	case errors.As(err, &timedOut):
		return fmt.Errorf("node %s did not reach %s within %s: %s", name, target, shortDuration(timeout), lastPhase(timedOut.Reached))
	case err != nil:
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "Node %s reached %s\n", name, rec.Phase)
	return nil
}

func orUnknown(unit string) string {
	if unit == "" {
		return "the unit"
	}
	return unit
}

func lastPhase(p reports.Phase) string {
	if p == "" {
		return "it reported nothing (is it booting media made with a report URL, from sno-iso serve or --report-url?)"
	}
	return "the last phase it reported is " + string(p)
}

func waitPhaseList() string {
	var names []string
	for _, p := range reports.WaitPhases {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// reportSource is where wait reads the node's records: the report URL of the server at
// --serve-url, with the token made from the nodes directory's secret, or the files a local
// server writes.
func reportSource(c *cli.Context, nodesDir, name string) (func(context.Context) ([]reports.Record, error), string, error) {
	if !c.IsSet("serve-url") {
		path := reports.FilePath(filepath.Join(nodesDir, reports.DirName), name)
		return func(context.Context) ([]reports.Record, error) {
			recs, err := reports.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
			return recs, err
		}, path, nil
	}
	base, err := parseBaseURL(c.String("serve-url"))
	if err != nil {
		return nil, "", usagef("--serve-url: %v", strings.TrimPrefix(err.Error(), "--base-url "))
	}
	secretFile := c.String("secret-file")
	if secretFile == "" {
		secretFile = capability.SecretPath(nodesDir)
	}
	secret, err := capability.ReadSecretFile(secretFile)
	if err != nil {
		return nil, "", secretAdvice(err)
	}
	url := reports.URL(base, secret.Key, name)
	client := &http.Client{Timeout: 30 * time.Second}
	return func(ctx context.Context) ([]reports.Record, error) {
		return reports.Fetch(ctx, client, url)
	}, base, nil
}
