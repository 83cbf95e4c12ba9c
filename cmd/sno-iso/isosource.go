package main

import (
	"github.com/sno-iso/sno-iso/download"
	"github.com/urfave/cli/v2"
)

// liveISOFlags name the live ISO of a command that reads one: --iso FILE or URL (with the
// flags that reach its server), or --stream SOURCE (with --arch, --cache-dir, --keyring) for
// the stream's ISO from the cache.
func liveISOFlags(isoUsage string) []cli.Flag {
	flags := append([]cli.Flag{&cli.StringFlag{Name: "iso", Usage: isoUsage + " (or --stream)"}}, streamFlags()...)
	return append(flags, originFlags()...)
}

// withLiveISO runs action with --iso set to the live ISO the flags name: --iso itself, or
// the ISO of --stream, downloaded and verified into the cache first when missing.
func withLiveISO(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		iso, stream := c.IsSet("iso"), c.IsSet("stream")
		switch {
		case iso && stream:
			return usagef("--iso and --stream both name the live ISO: give one")
		case !iso && !stream:
			return usagef("%s needs --iso FILE or --stream SOURCE: the live ISO, or the stream metadata that names it "+
				"(what `openshift-install coreos print-stream-json` prints)", c.Command.HelpName)
		case iso:
			for _, name := range []string{"arch", "keyring"} {
				if c.IsSet(name) {
					return usagef("--%s goes with --stream, not --iso", name)
				}
			}
			return action(c)
		}
		d, err := newDownloader(c)
		if err != nil {
			return err
		}
		artifacts, err := streamArtifacts(c, d.cache.Fetcher, c.String("stream"), c.String("arch"), download.FormatISO)
		if err != nil {
			return err
		}
		path, err := d.get(c, artifacts[0])
		if err != nil {
			return err
		}
		if err := c.Set("iso", path); err != nil {
			return err
		}
		return action(c)
	}
}
