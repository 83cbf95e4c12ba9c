package main

import (
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/origin"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve each node's customized ISO, minimal ISO and PXE files over HTTP, composed from the pristine ISO without copying it",
		Description: "Each subdirectory of --nodes is a node: DIR/NODE/" + nodedir.IgnitionFile + " and,\n" +
			"optionally, DIR/NODE/" + nodedir.ConfigFile + " (paths in it are relative to it). The media carry the\n" +
			"cluster's private keys, so each node's are published under an unguessable TOKEN derived from a\n" +
			"secret (--secret-file, or DIR/" + capability.SecretFileName + ", created 0600 on first start); `sno-iso serve urls`\n" +
			"prints them:\n" +
			"  /TOKEN/NODE.iso          what `sno-iso build` writes for the node\n" +
			"  /TOKEN/NODE-minimal.iso  what `sno-iso build --minimal` writes, fetching /rootfs.img\n" +
			"  /TOKEN/NODE/boot.ipxe    with vmlinuz, initrd.img, rootfs.img beside it: what\n" +
			"                           `pxe build --base-url` writes\n" +
			"  /rootfs.img              the ISO's root file system (no secrets: open to all)\n" +
			"  /                        the nodes and their state (their URLs only for clients on this\n" +
			"                           machine)\n" +
			"  /healthz, /readyz, /metrics\n" +
			"                           liveness, readiness and Prometheus metrics (on --admin-listen when\n" +
			"                           given)\n" +
			"Any other path, a wrong token included, gets 404. --open publishes /NODE.iso etc. instead.\n" +
			"A node is prepared on its first request and again when its files change (a Kubernetes Secret or\n" +
			"ConfigMap mounted at DIR/NODE is read one version at a time); the ISO is parsed once, and again\n" +
			"if the file or the object at its URL changes. --iso may be an http(s) URL of a server or\n" +
			"S3-compatible store that answers Range requests (public or pre-signed), or s3://BUCKET/KEY read\n" +
			"with the AWS SDK's credentials (environment, profile, IRSA, Pod Identity, instance role): the\n" +
			"ISO is read by ranges while serve copies it to local disk once (--iso-copy-dir), then served\n" +
			"from the copy; the origin is still asked every 5 seconds whether it changed. Replicas share the\n" +
			"secret through --secret-file (a mounted Kubernetes Secret). SIGINT or SIGTERM stops accepting\n" +
			"and lets downloads in progress finish for up to 30 seconds.",
		Flags: append(liveISOFlags("the pristine RHCOS live `ISO`: a path, an http(s) URL that answers Range requests, or s3://BUCKET/KEY"),
			&cli.StringFlag{Name: "iso-copy-dir", DefaultText: "$TMPDIR, else /tmp", Usage: "copy an --iso URL into `DIR` (its size, in " +
				"a file without a name, gone when serve ends; memory on a tmpfs), once per version, and serve it from there once " +
				"complete; none serves every download from the origin"},
			&cli.StringFlag{Name: "listen", Value: defaultListen, Usage: "listen on `ADDRESS`, host:port (port 0 picks one; an empty host means " +
				"all interfaces, with a warning)"},
			nodesFlag(),
			&cli.StringFlag{Name: "base-url", Usage: "the http(s) `URL` at which nodes reach this server (default: http(s)://ADDRESS when " +
				"--listen names one)"},
			&cli.StringFlag{Name: "node-cache-size", Value: "32MiB", Usage: "keep prepared nodes in at most `SIZE` of memory (KiB, MiB, GiB); " +
				"the least recently used are prepared again when asked for"},
			&cli.IntFlag{Name: "max-connections", Value: serve.DefaultMaxConnections, Usage: "keep at most `N` connections open; past it the one " +
				"that has waited longest for a request is closed"},
			&cli.IntFlag{Name: "max-connections-per-client", Usage: "keep at most `N` connections open from one client address (0: no " +
				"bound; leave 0 behind a reverse proxy or load balancer, where every client has its address)"},
			&cli.IntFlag{Name: "max-concurrent", Value: serve.DefaultMaxConcurrent, Usage: "send at most `N` responses at once; more get 503 " +
				"with Retry-After (waiting for a node's preparation takes no place)"},
			&cli.DurationFlag{Name: "write-timeout", Value: serve.DefaultWriteTimeout, Usage: "cut off a client that takes longer than " +
				"`DURATION` to accept each 512 KiB, freeing its place"},
			&cli.DurationFlag{Name: "prepare-timeout", Value: serve.DefaultPrepareTimeout, Usage: "answer a node's requests 503 when reading " +
				"and checking its files takes longer than `DURATION`; other nodes are not held up"},
			growEmbedAreaFlag(),
			secretFileFlag(),
			&cli.DurationFlag{Name: "rotation-grace", Value: time.Hour, Usage: "keep the URLs of a secret replaced by hand working for " +
				"`DURATION` (rotate-secret names its own grace period in the file)"},
			&cli.BoolFlag{Name: "open", Usage: "publish plain URLs (/NODE.iso) that anyone who can reach the server can guess, instead of " +
				"capability URLs"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with the PEM certificate `FILE` (self-signed is fine for BMCs); needs --tls-key"},
			&cli.StringFlag{Name: "tls-key", Usage: "the PEM private key `FILE` of --tls-cert"},
			&cli.StringFlag{Name: "admin-listen", Usage: "serve /healthz, /readyz and /metrics on `ADDRESS` (host:port) only, not with the " +
				"nodes, over plain HTTP"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log lines as `FORMAT`: text, or json (one JSON object a line, through " +
				"log/slog)"},
		),
		Action:      refuseServeArguments(withLiveISO(serveNodes)),
		Subcommands: []*cli.Command{serveURLsCommand(), rotateSecretCommand()},
	}
}

// defaultListen is all interfaces, as BMCs and nodes must reach the server; serve warns.
const defaultListen = ":8080"

// refuseServeArguments refuses arguments to serve itself before its options are checked, so
// that a mistyped subcommand (serve url) is named as one, with the nearest subcommand.
func refuseServeArguments(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return action(c)
		}
		name := c.Args().First()
		if s := nearestSubcommand(c, name); s != "" {
			return usagef("unknown command %q; did you mean %q?", name, s)
		}
		return usagef("unknown command %q; serve takes no arguments: the ISO goes in --iso and the nodes directory in --nodes (see --help)", name)
	}
}

func serveNodes(c *cli.Context) error {
	if !c.IsSet("nodes") {
		return usagef("%s needs --nodes (see --help)", c.Command.HelpName)
	}
	if err := checkNodesDir(c); err != nil {
		return err
	}
	cacheBytes, err := parseByteSize("node-cache-size", c.String("node-cache-size"))
	if err != nil {
		return err
	}
	if cacheBytes == 0 {
		return usagef("--node-cache-size must be more than 0: a node's preparation is kept while its request is answered")
	}
	setMemoryLimit(serveMemoryLimit(cacheBytes, c.String("iso")))
	if n := c.Int("max-connections"); n < 1 {
		return usagef("--max-connections must be at least 1, got %d", n)
	}
	if n := c.Int("max-connections-per-client"); n < 0 {
		return usagef("--max-connections-per-client must be 0 (no bound) or more, got %d", n)
	}
	if n := c.Int("max-concurrent"); n < 1 {
		return usagef("--max-concurrent must be at least 1, got %d", n)
	}
	for _, flag := range []string{"prepare-timeout", "write-timeout"} {
		if d := c.Duration(flag); d <= 0 {
			return usagef("--%s must be positive, got %v", flag, d)
		}
	}
	baseURL, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return err
	}
	originOpts, err := originOptions(c)
	if err != nil {
		return err
	}
	copyDir, err := isoCopyDir(c)
	if err != nil {
		return err
	}
	logger, err := serveLogger(c.String("log-format"), c.App.ErrWriter)
	if err != nil {
		return err
	}
	if err := checkAdminListen(c.String("admin-listen")); err != nil {
		return err
	}
	tlsConfig, err := serveTLS(c)
	if err != nil {
		return err
	}
	if c.Bool("open") && c.IsSet("secret-file") {
		return usagef("--open publishes plain URLs: it takes no --secret-file")
	}
	ln, err := listen(c, c.String("listen"), tlsConfig)
	if err != nil {
		return err
	}
	defer ln.Close()
	// The nodes report to the URL they reach the server at: --base-url, else the address it
	// listens on unless that is this machine's loopback, which no node reaches.
	reportBase := baseURL
	if baseURL == "" {
		baseURL = listenURL(ln.Addr(), tlsConfig != nil)
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
			reportBase = baseURL
		}
	}
	var reportCA []byte
	if tlsConfig != nil && reportBase != "" {
		if reportCA, err = readReportCA(c.String("tls-cert")); err != nil {
			return fmt.Errorf("--tls-cert: %w", err)
		}
	}
	srv, err := serve.New(serve.Config{
		ISO:                     c.String("iso"),
		Origin:                  originOpts,
		ISOCopyDir:              copyDir,
		NodesDir:                c.String("nodes"),
		BaseURL:                 baseURL,
		MaxConcurrent:           c.Int("max-concurrent"),
		MaxConnections:          c.Int("max-connections"),
		MaxConnectionsPerClient: c.Int("max-connections-per-client"),
		NodeCacheBytes:          cacheBytes,
		PrepareTimeout:          c.Duration("prepare-timeout"),
		WriteTimeout:            c.Duration("write-timeout"),
		GrowEmbedArea:           c.Bool("grow-embed-area"),
		Log:                     c.App.ErrWriter,
		Logger:                  logger,
		SeparateAdmin:           c.String("admin-listen") != "",
		Open:                    c.Bool("open"),
		SecretFile:              c.String("secret-file"),
		RotationGrace:           c.Duration("rotation-grace"),
		ReportBaseURL:           reportBase,
		ReportStore:             reportStore(c),
		ReportCA:                reportCA,
		OnReport:                ejectOnInstallDone(c),
	})
	if err != nil {
		return secretAdvice(err)
	}
	defer srv.Close()
	if addr := c.String("admin-listen"); addr != "" {
		if err := serveAdmin(c, srv, addr); err != nil {
			return err
		}
	}
	where := servedURL(ln.Addr(), tlsConfig != nil, baseURL)
	if c.Bool("open") {
		fmt.Fprintf(c.App.ErrWriter, "Warning: --open: every node's media, with its cluster's private keys, go to anyone who can reach this "+
			"server and guess /NODE.iso\n")
	}
	fmt.Fprintf(c.App.ErrWriter, "Serving the nodes of %s at %s/ (Ctrl-C to stop)\n", c.String("nodes"), where)
	if !c.Bool("open") {
		fmt.Fprintf(c.App.ErrWriter, "Each node's URLs: sno-iso serve urls --nodes %s --base-url %s\n", c.String("nodes"), where)
	}
	if strings.Contains(where, "HOST:") {
		fmt.Fprintf(c.App.ErrWriter, "(HOST: this machine's name or address as the BMCs and nodes reach it)\n")
	}
	if baseURL == "" {
		fmt.Fprintf(c.App.ErrWriter, "Note: without --base-url, boot.ipxe names the address each request was sent to, and minimal ISOs need "+
			"output.rootfsURL in their sno.yaml\n")
	}
	return srv.Serve(c.Context, ln)
}

// isoCopyDir is where serve copies an --iso URL (--iso-copy-dir): the temporary directory
// unless told otherwise; "" for none, and for an ISO that is a local file.
func isoCopyDir(c *cli.Context) (string, error) {
	dir := c.String("iso-copy-dir")
	switch {
	case !origin.IsURL(c.String("iso")) || dir == "none":
		return "", nil
	case !c.IsSet("iso-copy-dir"):
		return os.TempDir(), nil
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", usagef("--iso-copy-dir %s is not a directory: create it, or give none to serve every download from the origin", dir)
	}
	return dir, nil
}

// servedURL is the URL the start-up lines give for the server: --base-url, else the address
// it listens on. Listening on every interface, it has no one address: HOST stands where the
// machine's own goes, rather than [::], which no BMC can reach.
func servedURL(addr net.Addr, tls bool, baseURL string) string {
	if baseURL != "" {
		return baseURL
	}
	if u := listenURL(addr, tls); u != "" {
		return u
	}
	if _, port, err := net.SplitHostPort(addr.String()); err == nil {
		return schemeOf(tls) + "HOST:" + port
	}
	return schemeOf(tls) + addr.String()
}

// listenURL is the server's URL when it listens on one address; "" when it listens on all,
// as then no single address is known to reach it.
func listenURL(addr net.Addr, tls bool) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return ""
	}
	return schemeOf(tls) + tcp.String()
}

// reportStore keeps the nodes' reports in the nodes directory, unless the secret is given
// (a fleet replica, over a read-only nodes directory): then in memory, the server's log and
// its sno_iso_node_phase metrics carrying them on.
func reportStore(c *cli.Context) reports.Store {
	if c.IsSet("secret-file") {
		return &reports.MemoryStore{}
	}
	return nil
}

// serveMemoryHeadroom is what serve needs besides its node cache: the parsed ISO, the
// connections' buffers, the preparations and minimal ISOs under way.
const serveMemoryHeadroom = 64 << 20

// serveMemoryLimit is what serve's memory may reach with a node cache of cacheBytes and the
// ISO iso: the headroom, and the origin's block cache when the ISO is an http(s) or s3:// URL.
func serveMemoryLimit(cacheBytes int64, iso string) int64 {
	limit := cacheBytes + serveMemoryHeadroom
	if origin.IsURL(iso) {
		limit += origin.DefaultBlocks * origin.DefaultBlockSize
	}
	return limit
}

// setMemoryLimit has the garbage collector keep serve's memory near limit (serveMemoryLimit),
// where it would otherwise let the heap grow to twice what is live (GOGC) before collecting:
// nodes dropped from the cache are garbage until then. GOMEMLIMIT, when set, decides instead.
func setMemoryLimit(limit int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
