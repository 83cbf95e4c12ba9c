package main

import (
	"fmt"
	"net"

	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve each node's customized ISO, minimal ISO and PXE files over HTTP, composed from the pristine ISO without copying it",
		Description: "Each subdirectory of --nodes is a node: DIR/NODE/" + node.DirIgnition + " and, optionally,\n" +
			"DIR/NODE/" + node.DirConfig + " (paths in it are relative to it). The URLs, short and without query strings for BMCs:\n" +
			"  /NODE.iso            what `sno-iso build` writes for the node\n" +
			"  /NODE-minimal.iso    what `sno-iso build --minimal` writes, fetching /rootfs.img\n" +
			"  /NODE/boot.ipxe      with /NODE/vmlinuz, /NODE/initrd.img, /NODE/rootfs.img: what `pxe build --base-url URL/NODE` writes\n" +
			"  /rootfs.img          the ISO's root file system\n" +
			"  /                    the list of nodes and their URLs\n" +
			"  /healthz, /readyz, /metrics   liveness, readiness and Prometheus metrics (on --admin-listen when given)\n" +
			"A node is prepared on its first request and again when its files change (a Kubernetes Secret or\n" +
			"ConfigMap mounted at DIR/NODE is read one version at a time); the ISO is parsed once, and again\n" +
			"if the file or the object at its URL changes. --iso may be an http(s) URL of a server or\n" +
			"S3-compatible store that answers Range requests (public or pre-signed): the ISO is read by\n" +
			"ranges, never downloaded whole. SIGINT or SIGTERM stops accepting and lets downloads in\n" +
			"progress finish for up to 30 seconds.",
		Flags: append(liveISOFlags("the pristine RHCOS live `ISO`: a path, or an http(s) URL that answers Range requests"),
			&cli.StringFlag{Name: "listen", Value: ":8080", Usage: "listen on `ADDRESS` (host:port; port 0 picks one)"},
			&cli.StringFlag{Name: "nodes", Usage: "`DIR` with one subdirectory per node", Required: true},
			&cli.StringFlag{Name: "base-url", Usage: "the http(s) `URL` at which nodes reach this server (default: http://ADDRESS when --listen names one)"},
			&cli.IntFlag{Name: "max-concurrent", Value: serve.DefaultMaxConcurrent, Usage: "answer at most `N` requests at once; more get 503 with Retry-After"},
			&cli.StringFlag{Name: "admin-listen", Usage: "serve /healthz, /readyz and /metrics on `ADDRESS` only, not with the nodes"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log lines as `FORMAT`: text, or json (one JSON object a line, through log/slog)"},
		),
		Action: withLiveISO(serveNodes),
	}
}

func serveNodes(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("serve takes no arguments, got %q; the ISO goes in --iso and the nodes directory in --nodes", c.Args().Slice())
	}
	if n := c.Int("max-concurrent"); n < 1 {
		return usagef("--max-concurrent must be at least 1, got %d", n)
	}
	baseURL, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return err
	}
	logger, err := serveLogger(c.String("log-format"), c.App.ErrWriter)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return err
	}
	defer ln.Close()
	if baseURL == "" {
		baseURL = listenURL(ln.Addr())
	}
	srv, err := serve.New(serve.Config{
		ISO:           c.String("iso"),
		NodesDir:      c.String("nodes"),
		BaseURL:       baseURL,
		MaxConcurrent: c.Int("max-concurrent"),
		Log:           c.App.ErrWriter,
		Logger:        logger,
		SeparateAdmin: c.String("admin-listen") != "",
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if addr := c.String("admin-listen"); addr != "" {
		if err := serveAdmin(c, srv, addr); err != nil {
			return err
		}
	}
	where := "http://" + ln.Addr().String()
	if baseURL != "" {
		where = baseURL
	}
	fmt.Fprintf(c.App.ErrWriter, "Serving the nodes of %s at %s/ (Ctrl-C to stop)\n", c.String("nodes"), where)
	if baseURL == "" {
		fmt.Fprintf(c.App.ErrWriter, "Note: without --base-url, boot.ipxe names the address each request was sent to, and minimal ISOs need output.rootfsURL in their sno.yaml\n")
	}
	return srv.Serve(c.Context, ln)
}

// listenURL is the server's URL when it listens on one address; "" when it listens on all,
// as then no single address is known to reach it.
func listenURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return ""
	}
	return "http://" + tcp.String()
}
