package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/nodedir"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/sno-iso/sno-iso/redfish"
	"github.com/urfave/cli/v2"
)

// The environment variables that carry BMC credentials: never a flag, so never on argv.
const (
	envBMCUsername = "SNO_ISO_BMC_USERNAME"
	envBMCPassword = "SNO_ISO_BMC_PASSWORD"
)

// maxCAFile bounds --ca-file: a bundle of every public CA takes well under 1 MiB.
const maxCAFile = 4 << 20

func bmcCommand() *cli.Command {
	return &cli.Command{
		Name:  "bmc",
		Usage: "boot a server from its ISO over Redfish virtual media, eject it, or show the BMC's state",
		Description: "The BMC is --bmc ADDRESS (https://HOST, https://HOST/redfish/v1/Systems/ID, or Metal3's\n" +
			"redfish-virtualmedia://HOST/... and idrac-virtualmedia://HOST/...), or the bmc section of a\n" +
			"node's sno.yaml with --node DIR/NODE. Credentials come from " + envBMCUsername + " and " + envBMCPassword + ",\n" +
			"or from --credentials-file (YAML with username: and password:), never from a flag.",
		Subcommands: []*cli.Command{
			{
				Name:  "boot",
				Usage: "insert the ISO URL into a virtual CD, set a one-time boot from it and power the server on (or restart it)",
				Description: "With --node DIR/NODE --serve-url URL it boots URL/TOKEN/NODE.iso (or URL/TOKEN/NODE-minimal.iso\n" +
					"with --minimal), the capability URL that `sno-iso serve` gives the node: TOKEN comes from the\n" +
					"secret serve keeps in DIR/" + capability.SecretFileName + " (or --secret-file), as `sno-iso serve urls` prints it;\n" +
					"--open boots URL/NODE.iso of a server started with --open. Running it again changes nothing\n" +
					"when the image is inserted and the server is on.",
				Flags: append(bmcFlags(),
					&cli.StringFlag{Name: "iso-url", Usage: "the `URL` the BMC fetches the ISO from (plain http, ending in .iso, without a query " +
						"string works everywhere)"},
					&cli.StringFlag{Name: "serve-url", Usage: "with --node: the `URL` of `sno-iso serve` (http://HOST:PORT)"},
					&cli.BoolFlag{Name: "minimal", Usage: "with --node: boot the node's minimal ISO"},
					&cli.StringFlag{Name: "secret-file", Usage: "with --node: the `FILE` serve was given in --secret-file (default: " +
						"DIR/" + capability.SecretFileName + ", beside the node)"},
					&cli.BoolFlag{Name: "open", Usage: "with --node: the plain URL of a server started with --open"},
					&cli.StringFlag{Name: "slot", Usage: "the virtual media slot `ID` to use (default: the first CD/DVD slot that takes the image)"},
					&cli.StringFlag{Name: "boot-mode", Usage: "`MODE` of the boot override, uefi or legacy (default: leave the server's)"},
					&cli.BoolFlag{Name: "no-power", Usage: "leave power alone: the server boots the ISO at its next start"},
					&cli.BoolFlag{Name: "wait", Usage: "wait until the server reports power on"},
					&cli.BoolFlag{Name: "eject-after-install", Usage: "with --node: stay until the node reports install-done, then eject the media and " +
						"clear the boot override"},
					&cli.DurationFlag{Name: "install-timeout", Value: 90 * time.Minute, Usage: "with --eject-after-install: give up waiting after " +
						"`DURATION`"},
				),
				Action: bmcBoot,
			},
			{
				Name:   "eject",
				Usage:  "eject the media of the named slot, or of every CD/DVD slot",
				Flags:  append(bmcFlags(), &cli.StringFlag{Name: "slot", Usage: "the virtual media slot `ID` to empty"}),
				Action: bmcEject,
			},
			{
				Name:   "status",
				Usage:  "show power, boot override and each virtual media slot",
				Flags:  bmcFlags(),
				Action: bmcStatus,
			},
		},
	}
}

// bmcFlags are the flags every bmc subcommand takes.
func bmcFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bmc", Usage: "the BMC's Redfish `ADDRESS`"},
		&cli.StringFlag{Name: "node", Usage: "the node `DIR/NODE` whose sno.yaml has a bmc section"},
		&cli.StringFlag{Name: "system", Usage: "the System when the BMC manages several: its `ID`, Name, UUID or path"},
		&cli.StringFlag{Name: "credentials-file", Usage: "YAML `FILE` with username: and password: (default: " +
			"" + envBMCUsername + " and " + envBMCPassword + ")"},
		&cli.BoolFlag{Name: "insecure", Usage: "do not verify the BMC's TLS certificate"},
		&cli.StringFlag{Name: "ca-file", Usage: "PEM `FILE` with the CA that signed the BMC's certificate"},
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "give up after `DURATION`"},
		&cli.DurationFlag{Name: "retry-delay", Value: 2 * time.Second, Usage: "first wait before retrying a busy BMC, and between polls of " +
			"its state (`DURATION`, doubled per retry)"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on standard output"},
		&cli.BoolFlag{Name: "verbose", Usage: "trace the HTTP exchanges on standard error, credentials and tokens redacted"},
	}
}

// bmcTarget is the BMC and System a command drives, from flags or a node's sno.yaml.
type bmcTarget struct {
	addr     redfish.Address
	system   string
	insecure bool
	caFile   string
	// caDir is the node directory the CA file is confined to, "" for --ca-file.
	caDir string
	creds redfish.Credentials
	// node is the node's name with --node, "" otherwise.
	node string
	// address is the address as given; the *From fields name where a setting came from,
	// a flag or a sno.yaml key, for errors to blame the right one.
	address                                                            string
	addressFrom, systemFrom, insecureFrom, caFileFrom, credentialsFrom string
}

func resolveBMCTarget(c *cli.Context) (*bmcTarget, error) {
	if c.NArg() != 0 {
		return nil, usagef("%s takes no arguments, got %q", c.Command.HelpName, c.Args().Slice())
	}
	t := &bmcTarget{system: c.String("system"), systemFrom: "--system", insecure: c.Bool("insecure"), insecureFrom: "--insecure",
		caFile: c.String("ca-file"), caFileFrom: "--ca-file", addressFrom: "--bmc"}
	address := c.String("bmc")
	credentialsFile := c.String("credentials-file")
	var nodeCredentials, nodeCredentialsFrom, nodeDirectory string
	switch nodeDir := c.String("node"); {
	case nodeDir != "" && address != "":
		return nil, usagef("give --bmc or --node, not both: --node takes the address from the node's %s", nodedir.ConfigFile)
	case nodeDir != "":
		b, err := nodedir.LoadBMC(nodeDir)
		if errors.Is(err, nodedir.ErrNoBMC) {
			return nil, fmt.Errorf("%w: add one with address: (and credentialsFile:), or use --bmc", err)
		}
		if err != nil {
			return nil, err
		}
		t.node = b.Node
		key := func(name string) string { return "bmc." + name + " in " + b.Config }
		address, t.addressFrom, nodeDirectory = b.Address, key("address"), b.Dir
		nodeCredentials, nodeCredentialsFrom = b.CredentialsFile, key("credentialsFile")
		if t.system == "" && b.SystemID != "" {
			t.system, t.systemFrom = b.SystemID, key("systemID")
		}
		if !t.insecure && b.Insecure {
			t.insecure, t.insecureFrom = true, key("insecure")
		}
		if t.caFile == "" && b.CAFile != "" {
			t.caFile, t.caFileFrom, t.caDir = b.CAFile, key("caFile"), b.Dir
		}
	case address == "":
		return nil, usagef("%s needs --bmc ADDRESS or --node DIR/NODE (see --help)", c.Command.HelpName)
	}
	var err error
	t.address = address
	if t.addr, err = redfish.ParseAddress(address); err != nil {
		if t.addressFrom == "--bmc" {
			return nil, usagef("--bmc: %v", err)
		}
		return nil, fmt.Errorf("%s: %w", t.addressFrom, err)
	}
	if t.insecure && t.caFile != "" {
		msg := fmt.Sprintf("%s skips the certificate check that %s is for: give one of them", t.insecureFrom, t.caFileFrom)
		if strings.HasPrefix(t.insecureFrom, "--") && strings.HasPrefix(t.caFileFrom, "--") {
			return nil, usagef("%s", msg)
		}
		return nil, errors.New(msg)
	}
	t.creds, t.credentialsFrom, err = bmcCredentials(credentialsFile, nodeCredentials, nodeCredentialsFrom, nodeDirectory, c.App.ErrWriter)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// bmcCredentials takes the account from --credentials-file, else the environment, else the
// node's credentialsFile, read only from inside nodeDir; none at all is allowed for BMCs that
// ask for none. It also says where the account came from ("" for none).
func bmcCredentials(flagFile, nodeFile, nodeFileFrom, nodeDir string, stderr io.Writer) (redfish.Credentials, string, error) {
	if flagFile != "" {
		creds, err := readCredentialsFile(flagFile, "", stderr)
		return creds, "--credentials-file " + flagFile, err
	}
	user, hasUser := os.LookupEnv(envBMCUsername)
	pass, hasPass := os.LookupEnv(envBMCPassword)
	if hasUser || hasPass {
		if user == "" || !hasPass {
			return redfish.Credentials{}, "", fmt.Errorf("set both %s and %s, or neither", envBMCUsername, envBMCPassword)
		}
		return redfish.Credentials{Username: user, Password: pass}, envBMCUsername + " and " + envBMCPassword, nil
	}
	if nodeFile != "" {
		creds, err := readCredentialsFile(nodeFile, nodeDir, stderr)
		return creds, nodeFileFrom + " (" + nodeFile + ")", err
	}
	return redfish.Credentials{}, "", nil
}

// readCredentialsFile reads the account in a Metal3 BMC Secret's keys, from inside the node
// directory nodeDir unless it is "", warning when other users can read it.
func readCredentialsFile(path, nodeDir string, stderr io.Writer) (redfish.Credentials, error) {
	c, exposed, err := nodedir.ReadCredentials(path)
	if nodeDir != "" {
		c, exposed, err = nodedir.ReadCredentialsIn(nodeDir, path)
	}
	if exposed {
		fmt.Fprintf(stderr, "Warning: %s can be read by other users; chmod 600 it\n", path)
	}
	return redfish.Credentials{Username: c.Username, Password: c.Password}, err
}

// bmcClient connects to the target with the TLS, trace and pacing the flags ask for.
func bmcClient(c *cli.Context, t *bmcTarget) (*redfish.Client, error) {
	tlsConfig, err := bmcTLS(t.insecure, t.caFile, t.caFileFrom, t.caDir)
	if err != nil {
		return nil, err
	}
	delay := c.Duration("retry-delay")
	if delay <= 0 {
		return nil, usagef("--retry-delay must be positive, got %s", delay)
	}
	if c.Duration("timeout") <= 0 {
		return nil, usagef("--timeout must be positive, got %s", c.Duration("timeout"))
	}
	stderr := c.App.ErrWriter
	opts := redfish.Options{
		Credentials: t.creds,
		TLS:         tlsConfig,
		Retry:       redfish.Backoff{Base: delay, Max: 15 * delay, Poll: delay},
		Progress: func(e redfish.Event) {
			switch e.Step {
			case redfish.StepWarning:
				fmt.Fprintf(stderr, "Warning: %s\n", e.Message)
			case redfish.StepBootPersists:
				fmt.Fprintf(stderr, "Warning: %s; eject the media after the install: sno-iso bmc eject\n", e.Message)
			default:
				fmt.Fprintln(stderr, e.Message)
			}
		},
	}
	if c.Bool("verbose") {
		opts.Trace = stderr
	}
	return redfish.New(t.addr, opts), nil
}

// bmcTLS is the TLS configuration that checks a BMC's certificate against caFile (named
// caFileFrom in messages; read only from inside the node directory caDir unless it is ""),
// or the system's roots, or not at all when insecure.
func bmcTLS(insecure bool, caFile, caFileFrom, caDir string) (*tls.Config, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if insecure {
		// The user asked for it: BMCs ship self-signed certificates.
		tlsConfig.InsecureSkipVerify = true
	}
	if caFile != "" {
		read := input.ReadFile
		if caDir != "" {
			read = func(path string, limit int64, what string) ([]byte, error) {
				return nodedir.ReadFileIn(caDir, path, limit, what)
			}
		}
		pemData, err := read(caFile, maxCAFile, "a PEM CA certificate")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caFileFrom, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caFileFrom, caFile)
		}
		tlsConfig.RootCAs = pool
	}
	return tlsConfig, nil
}

// runBMC connects, runs do within --timeout, logs out, prints the result as JSON when asked,
// and adds advice to errors.
func runBMC(c *cli.Context, do func(ctx context.Context, client *redfish.Client, t *bmcTarget) (any, error)) error {
	t, err := resolveBMCTarget(c)
	if err != nil {
		return err
	}
	client, err := bmcClient(c, t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	result, err := do(ctx, client, t)
	logout, cancelLogout := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelLogout()
	if closeErr := client.Close(logout); closeErr != nil && err == nil {
		fmt.Fprintf(c.App.ErrWriter, "Warning: logging out of the BMC: %v\n", closeErr)
	}
	if err != nil {
		return bmcAdvice(c, t, err)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(result)
	}
	return nil
}

// bmcAdvice says what to do about a failure, in the command line's terms: the flag or the
// sno.yaml key the value came from.
func bmcAdvice(c *cli.Context, t *bmcTarget, err error) error {
	var (
		notFound   *redfish.NotFoundError
		ambiguous  *redfish.AmbiguousSystemError
		incomplete *redfish.IncompleteError
		slotType   *redfish.SlotTypeError
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
	)
	caHint := "--ca-file"
	if t.node != "" {
		caHint = "--ca-file (or caFile: in the bmc section of the node's sno.yaml)"
	}
	switch {
	case errors.Is(err, redfish.ErrNoCredentials):
		where := "--credentials-file FILE"
		if t.node != "" {
			where += ", or credentialsFile: in the bmc section of the node's sno.yaml"
		}
		return fmt.Errorf("%w; give the account in %s and %s, or in %s", err, envBMCUsername, envBMCPassword, where)
	case errors.Is(err, redfish.ErrWrongCredentials):
		return fmt.Errorf("%w; check the username and password in %s", err, t.credentialsFrom)
	case errors.Is(err, redfish.ErrInsufficientPrivilege) && t.credentialsFrom == "":
		return fmt.Errorf("%w; without an account the BMC allows no more: give one with the Operator role or more "+
			"in %s and %s, or --credentials-file", err, envBMCUsername, envBMCPassword)
	case errors.Is(err, redfish.ErrInsufficientPrivilege):
		return fmt.Errorf("%w; the account %q from %s may not do this: give one with the Operator role or more",
			err, t.creds.Username, t.credentialsFrom)
	case errors.Is(err, redfish.ErrPlainHTTP):
		return fmt.Errorf("%w; this BMC speaks plain HTTP: write %s in %s", err, plainHTTPAddress(t.address), t.addressFrom)
	case errors.As(err, &notFound) && notFound.Kind == redfish.KindSystem && t.systemFrom != "--system":
		return fmt.Errorf("%w; correct %s, or choose one with --system ID", err, t.systemFrom)
	case errors.As(err, &notFound) && notFound.Kind == redfish.KindSystem, errors.As(err, &ambiguous):
		return fmt.Errorf("%w; choose one with --system ID", err)
	case errors.As(err, &notFound):
		return fmt.Errorf("%w; choose one with --slot ID", err)
	case errors.As(err, &slotType):
		return fmt.Errorf("%w; name one of those with --slot, or leave --slot out", err)
	case errors.As(err, &incomplete) && !incomplete.Ejected:
		return fmt.Errorf("%w; run `sno-iso bmc eject` with the same --bmc or --node to take it out", err)
	case errors.As(err, &unknownCA), errors.As(err, &hostname):
		if t.caFile != "" {
			return fmt.Errorf("%w; %s %s is not the CA that signed the BMC's certificate", err, t.caFileFrom, t.caFile)
		}
		return fmt.Errorf("%w; give the BMC's CA with %s, or skip the check with --insecure", err, caHint)
	case errors.Is(err, redfish.ErrNotRedfish):
		return fmt.Errorf("%w; check the address: it should be the BMC's https://HOST", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: the BMC did not finish within --timeout %s; check that it is reachable, or raise "+
			"--timeout", err, c.Duration("timeout"))
	}
	return err
}

// plainHTTPAddress is address spoken over plain HTTP: http:// for https://, the +http form
// of Metal3's schemes.
func plainHTTPAddress(address string) string {
	scheme, rest, ok := strings.Cut(address, "://")
	if !ok {
		return address
	}
	switch base, _, _ := strings.Cut(strings.ToLower(scheme), "+"); base {
	case "https", "http":
		return "http://" + rest
	default:
		return base + "+http://" + rest
	}
}

func bmcBoot(c *cli.Context) error {
	mode, err := bootMode(c.String("boot-mode"))
	if err != nil {
		return err
	}
	if c.Bool("eject-after-install") && c.String("node") == "" {
		return usagef("--eject-after-install needs --node: the node's reports say when its disk is written")
	}
	err = runBMC(c, func(ctx context.Context, client *redfish.Client, t *bmcTarget) (any, error) {
		image, err := bootImageURL(c, t)
		if err != nil {
			return nil, err
		}
		if err := redfish.CheckImage(ctx, nil, image); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "Warning: %v; the BMC may reach it where this machine cannot, but check the URL if the boot fails\n", err)
		}
		res, err := client.Boot(ctx, redfish.BootRequest{
			System: t.system, Slot: c.String("slot"), Image: image, Mode: mode,
			NoPower: c.Bool("no-power"), Wait: c.Bool("wait"),
		})
		if err != nil {
			return nil, err
		}
		if res.Changed {
			fmt.Fprintf(c.App.ErrWriter, "Booting %s from %s: its BMC fetches the ISO from there now\n", res.System, image)
		}
		return res, nil
	})
	if err != nil || !c.Bool("eject-after-install") {
		return err
	}
	if err := followNode(c, c.String("node"), reports.InstallDone, c.Duration("install-timeout"), 2*time.Second); err != nil {
		return err
	}
	return runBMC(c, func(ctx context.Context, client *redfish.Client, t *bmcTarget) (any, error) {
		res, err := client.EjectAfterInstall(ctx, t.system)
		if err == nil {
			fmt.Fprintf(c.App.ErrWriter, "Node %s installed: %s\n", t.node, describeEject(res))
		}
		return res, err
	})
}

func bootMode(s string) (string, error) {
	switch strings.ToLower(s) {
	case "":
		return "", nil
	case "uefi":
		return redfish.ModeUEFI, nil
	case "legacy", "bios":
		return redfish.ModeLegacy, nil
	}
	return "", badValue("boot-mode", s, bootModes)
}

// bootImageURL is --iso-url, or with --node the URL serve gives the node.
func bootImageURL(c *cli.Context, t *bmcTarget) (string, error) {
	isoURL, serveURL := c.String("iso-url"), c.String("serve-url")
	if t.node == "" {
		if serveURL != "" || c.Bool("minimal") || c.IsSet("secret-file") || c.Bool("open") {
			return "", usagef("--serve-url, --minimal, --secret-file and --open go with --node; with --bmc, give the ISO's URL in --iso-url")
		}
		if isoURL == "" {
			return "", usagef("%s needs --iso-url URL (or --node DIR/NODE --serve-url URL)", c.Command.HelpName)
		}
		return isoURL, nil
	}
	if isoURL != "" {
		return "", usagef("with --node, the ISO URL comes from --serve-url; leave out --iso-url")
	}
	if serveURL == "" {
		return "", usagef("%s --node needs --serve-url, the http://HOST:PORT of `sno-iso serve`", c.Command.HelpName)
	}
	u, err := url.Parse(serveURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", usagef("--serve-url %q must be the plain http://HOST:PORT at which the BMC reaches `sno-iso serve`", serveURL)
	}
	if c.Bool("open") && c.IsSet("secret-file") {
		return "", usagef("--open names the plain URL of a server without a secret: leave out --secret-file")
	}
	access := nodedir.Access{SecretFile: c.String("secret-file"), Open: c.Bool("open")}
	return servedISOURL(serveURL, c.String("node"), c.Bool("minimal"), access)
}

// servedISOURL is the URL at which `sno-iso serve` offers the ISO of the node in nodeDir.
func servedISOURL(serveURL, nodeDir string, minimal bool, access nodedir.Access) (string, error) {
	urls, err := nodedir.ServedURLs(serveURL, nodeDir, access)
	if err != nil {
		return "", servedSecretAdvice(err)
	}
	if minimal {
		return urls.MinimalISO, nil
	}
	return urls.ISO, nil
}

// servedSecretAdvice says where the secret of serve's URLs comes from when bmc boot cannot
// read it.
func servedSecretAdvice(err error) error {
	switch {
	case errors.Is(err, capability.ErrNoSecret):
		return fmt.Errorf("%w, so the node's capability URL is unknown; start sno-iso serve over the nodes directory once (it creates the "+
			"secret) or run sno-iso serve rotate-secret --nodes DIR; give --secret-file if serve was started with one, or --open if it was "+
			"started with --open", err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w; the secret is the owner's only: run bmc boot as the user that runs sno-iso serve, or give a readable copy in "+
			"--secret-file", err)
	}
	return secretAdvice(err)
}

func bmcEject(c *cli.Context) error {
	return runBMC(c, func(ctx context.Context, client *redfish.Client, t *bmcTarget) (any, error) {
		res, err := client.Eject(ctx, t.system, c.String("slot"))
		if err == nil && !res.Changed {
			fmt.Fprintln(c.App.ErrWriter, "nothing to eject: nothing had to change")
		}
		return res, err
	})
}

func bmcStatus(c *cli.Context) error {
	return runBMC(c, func(ctx context.Context, client *redfish.Client, t *bmcTarget) (any, error) {
		st, err := client.Status(ctx, t.system)
		if err != nil || c.Bool("json") {
			return st, err
		}
		w := c.App.Writer
		fmt.Fprintf(w, "system  %s\npower   %s\n", st.System, st.PowerState)
		fmt.Fprintf(w, "boot    %s %s", orDash(st.Boot.Target), orDash(st.Boot.Enabled))
		if st.Boot.Mode != "" {
			fmt.Fprintf(w, " (%s)", st.Boot.Mode)
		}
		fmt.Fprintln(w)
		for _, m := range st.Media {
			image := "empty"
			if m.Inserted {
				image = m.Image
			}
			fmt.Fprintf(w, "media   %s (%s): %s\n", m.ID, strings.Join(m.MediaTypes, "/"), image)
		}
		return st, nil
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
