package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"

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
	return nil, badValue("log-format", format, logFormats)
}

// checkAdminListen refuses an --admin-listen that is not host:port, as --listen does; ""
// means no admin listener.
func checkAdminListen(addr string) error {
	if addr == "" {
		return nil
	}
	_, err := checkListenAddress("admin-listen", addr, "9090")
	return err
}

// serveAdmin answers /healthz, /readyz and /metrics on addr until the command ends.
func serveAdmin(c *cli.Context, srv *serve.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return listenError("admin-listen", addr, err)
	}
	go func() {
		if err := srv.ServeAdmin(c.Context, ln); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "Error: the admin endpoints on %s stopped: %v\n", addr, err)
		}
	}()
	fmt.Fprintf(c.App.ErrWriter, "Health, readiness and metrics at http://%s/\n", ln.Addr())
	return nil
}
