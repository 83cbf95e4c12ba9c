package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/nodedir"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/urfave/cli/v2"
)

func nodesFlag() cli.Flag {
	return &cli.StringFlag{Name: "nodes", Usage: "`DIR` with one subdirectory per node (required)"}
}

// nodesDirAdvice says what --nodes names.
const nodesDirAdvice = "--nodes names a directory with one subdirectory per node, holding its " + nodedir.IgnitionFile +
	" and, optionally, its " + nodedir.ConfigFile

// checkNodesDir refuses a --nodes that does not exist, before anything is read or created in it.
func checkNodesDir(c *cli.Context) error {
	dir := c.String("nodes")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the nodes directory %s does not exist; %s", dir, nodesDirAdvice)
	}
	return nil
}

func secretFileFlag() cli.Flag {
	return &cli.StringFlag{Name: "secret-file", Usage: "read the secret of the capability URLs from `FILE`, never writing it " +
		"(a mounted Kubernetes Secret; default: NODES/" + capability.SecretFileName + ")"}
}

func serveURLsCommand() *cli.Command {
	return &cli.Command{
		Name:  "urls",
		Usage: "print each node's URLs, as `sno-iso serve` publishes them",
		Description: "Prints NODE, KIND and URL per line, for every node of --nodes or the one --node names: iso,\n" +
			"minimal-iso, boot.ipxe, and pxe-dir (the --base-url of `pxe build` for the node). The token is\n" +
			"the unpadded base64url of the first 16 bytes of HMAC-SHA-256(key, \"sno-iso node \" + NODE),\n" +
			"the key being the secret file's. Without --base-url the URLs are paths. With --base-url, report is\n" +
			"the URL the node reports its install's phases to (see sno-iso wait); an open server takes none.",
		Flags: []cli.Flag{
			nodesFlag(),
			secretFileFlag(),
			&cli.StringFlag{Name: "base-url", Usage: "the http(s) `URL` at which nodes reach the server"},
			&cli.StringFlag{Name: "node", Usage: "print only the URLs of node `NAME`"},
			&cli.BoolFlag{Name: "open", Usage: "print the plain URLs of a server started with --open"},
		},
		Action: serveURLs,
	}
}

func serveURLs(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("serve urls takes no arguments, got %q", c.Args().Slice())
	}
	if !c.IsSet("nodes") {
		return usagef("%s needs --nodes (see --help)", c.Command.HelpName)
	}
	if err := checkNodesDir(c); err != nil {
		return err
	}
	baseURL, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return err
	}
	var secret *capability.Secret
	if !c.Bool("open") {
		if secret, err = capability.ReadSecretFile(secretPath(c)); err != nil {
			return secretAdvice(err)
		}
	}
	nodes, err := capability.NodeNames(c.String("nodes"))
	if err != nil {
		return err
	}
	if name := c.String("node"); name != "" {
		if !slices.Contains(nodes, name) {
			return fmt.Errorf("no node %q in %s: the nodes are its subdirectories %q", name, c.String("nodes"), nodes)
		}
		nodes = []string{name}
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
	for _, node := range nodes {
		u := capability.NodeURLs(baseURL, secret, node)
		fmt.Fprintf(w, "%s\tiso\t%s\n%s\tminimal-iso\t%s\n%s\tboot.ipxe\t%s\n%s\tpxe-dir\t%s\n",
			node, u.ISO, node, u.MinimalISO, node, u.BootIPXE, node, u.PXEDir)
		if secret != nil && baseURL != "" {
			fmt.Fprintf(w, "%s\treport\t%s\n", node, reports.URL(baseURL, secret.Key, node))
		}
	}
	return w.Flush()
}

func rotateSecretCommand() *cli.Command {
	return &cli.Command{
		Name:  "rotate-secret",
		Usage: "replace the secret of the capability URLs; the old URLs keep working for --grace",
		Description: "Writes a new key to the secret file atomically (creating the file if missing), keeping the old\n" +
			"key and the end of its grace period in the file: every server reading the file, replicas\n" +
			"included, takes the new URLs without a restart and refuses the old ones after --grace.",
		Flags: []cli.Flag{
			nodesFlag(),
			&cli.StringFlag{Name: "secret-file", Usage: "the secret `FILE` (default: NODES/" + capability.SecretFileName + ")"},
			&cli.DurationFlag{Name: "grace", Value: time.Hour, Usage: "keep the old URLs working for `DURATION` (0: refuse them at once)"},
		},
		Action: rotateSecret,
	}
}

func rotateSecret(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("serve rotate-secret takes no arguments, got %q", c.Args().Slice())
	}
	if c.IsSet("nodes") == c.IsSet("secret-file") {
		return usagef("%s needs either --nodes or --secret-file (see --help)", c.Command.HelpName)
	}
	if c.IsSet("nodes") {
		if err := checkNodesDir(c); err != nil {
			return err
		}
	}
	grace := c.Duration("grace")
	if grace < 0 {
		return usagef("--grace must not be negative, got %v", grace)
	}
	path, now := secretPath(c), time.Now()
	if err := capability.RotateSecretFile(path, now, grace); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "Wrote a new secret to %s; the old URLs work until %s. Print the new ones with sno-iso serve urls.\n",
		path, now.Add(grace).UTC().Format(time.RFC3339))
	return nil
}

// secretPath is --secret-file, else the nodes directory's secret.
func secretPath(c *cli.Context) string {
	if p := c.String("secret-file"); p != "" {
		return p
	}
	return capability.SecretPath(c.String("nodes"))
}

// secretAdvice says what to do about a secret that cannot be read or created.
func secretAdvice(err error) error {
	switch {
	case errors.Is(err, capability.ErrNoSecret):
		return fmt.Errorf("%w; start sno-iso serve over the nodes directory once, "+
			"or make one with sno-iso serve rotate-secret --secret-file FILE", err)
	case errors.Is(err, capability.ErrBadSecret):
		return fmt.Errorf("%w; write a new one with sno-iso serve rotate-secret (the URLs change)", err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%w; the nodes directory cannot hold the secret: "+
			"give one with --secret-file (made with sno-iso serve rotate-secret --secret-file FILE)", err)
	}
	return err
}
