package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/sno-iso/sno-iso/origin"
	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
)

// serveLogger returns the slog logger of --log-format; nil keeps serve's plain lines.
func serveLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return nil, nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usagef("--log-format must be text or json, got %q", format)
}

// serveAdmin answers /healthz, /readyz and /metrics on addr until the command ends.
func serveAdmin(c *cli.Context, srv *serve.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--admin-listen %s: %w", addr, err)
	}
	go func() {
		if err := srv.ServeAdmin(c.Context, ln); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "Error: the admin endpoints on %s stopped: %v\n", addr, err)
		}
	}()
	fmt.Fprintf(c.App.ErrWriter, "Health, readiness and metrics at http://%s/\n", ln.Addr())
	return nil
}

// displayISO is how messages name --iso: a URL without its query, which may be a
// pre-signed URL's credentials.
func displayISO(iso string) string {
	if strings.HasPrefix(iso, "http://") || strings.HasPrefix(iso, "https://") {
		return origin.Redact(iso)
	}
	return iso
}

// originAdvice says what to do about an --iso URL that cannot be served from.
func originAdvice(err error) error {
	switch {
	case errors.Is(err, origin.ErrNoRanges):
		return fmt.Errorf("%w: --iso needs a web server or object store that answers Range requests (nginx, S3, GCS, MinIO do), or download the ISO and pass its path", err)
	case errors.Is(err, origin.ErrStatus), errors.Is(err, origin.ErrBadResponse):
		return fmt.Errorf("%w; check the --iso URL (a pre-signed URL may have expired)", err)
	}
	return err
}
