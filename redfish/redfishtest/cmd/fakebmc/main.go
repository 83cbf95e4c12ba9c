// Command fakebmc runs the project's fake BMC on its own, so that `sno-iso bmc boot`,
// `status` and `eject` can be tried without hardware:
//
//	go run ./redfish/redfishtest/cmd/fakebmc --profile sushy-tools
//
// It listens on 127.0.0.1 (any free port) unless told otherwise, prints its URL, the
// System's path and the account, and runs until interrupted or, with --lifetime, until that
// much time has passed. Its virtual CD fetches each inserted image into a temporary
// directory, removed at exit, as a BMC fetches it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	profiles := map[string]redfishtest.Profile{}
	var names []string
	for _, p := range redfishtest.Profiles() {
		profiles[p.Name] = p
		names = append(names, p.Name)
	}
	sort.Strings(names)
	fs := flag.NewFlagSet("fakebmc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "sushy-tools", "the BMC to behave like: "+strings.Join(names, ", "))
	listen := fs.String("listen", "127.0.0.1:0", "the `HOST:PORT` to listen on (port 0: any free port)")
	useTLS := fs.Bool("tls", false, "serve HTTPS with a self-signed certificate (use sno-iso's --insecure)")
	username := fs.String("username", "admin", "the account's `NAME`")
	lifetime := fs.Duration("lifetime", 0, "stop after `DURATION` (default: run until interrupted)")
	powerDelay := fs.Duration("power-delay", 2*time.Second, "how long powering on and off takes (`DURATION`)")
	noFetch := fs.Bool("no-fetch", false, "do not fetch inserted images (by default the virtual CD fetches each one, as a BMC does)")
	maxRequests := fs.Int("max-requests", 100000, "answer at most `N` requests, then 503")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("fakebmc takes no arguments, got %q", fs.Args())
	}
	p, ok := profiles[*profile]
	if !ok {
		return fmt.Errorf("no profile %q: choose one of %s", *profile, strings.Join(names, ", "))
	}
	if *lifetime < 0 || *powerDelay < 0 {
		return errors.New("--lifetime and --power-delay cannot be negative")
	}
	password, err := randomPassword()
	if err != nil {
		return err
	}
	cfg := redfishtest.Config{Profile: p, Username: *username, Password: password, TLS: *useTLS,
		PowerDelay: *powerDelay, MaxRequests: *maxRequests,
		OnBoot: func(b redfishtest.Boot) { fmt.Fprintf(stdout, "booted %s\n", b.Image) }}
	if !*noFetch {
		dir, err := os.MkdirTemp("", "fakebmc-virtual-cd-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.FetchDir = dir
	}
	bmc, err := redfishtest.Listen(*listen, cfg)
	if err != nil {
		return err
	}
	defer bmc.Close()
	fmt.Fprintf(stdout, "fake BMC (%s profile)\nurl: %s\nsystem: %s\nusername: %s\npassword: %s\n",
		p.Name, bmc.URL(), bmc.SystemPath(), *username, password)
	insecure := ""
	if *useTLS {
		insecure = " --insecure"
	}
	fmt.Fprintf(stderr, "Try: SNO_ISO_BMC_USERNAME=%s SNO_ISO_BMC_PASSWORD=%s sno-iso bmc status --bmc %s%s\n",
		*username, password, bmc.URL(), insecure)
	if *lifetime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *lifetime)
		defer cancel()
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "fake BMC stopped")
	return nil
}

// randomPassword is a fresh password for each run: a fake on a shared machine is still
// somebody's BMC for the time it runs.
func randomPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
