package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/sno-iso/sno-iso/serve"
	"github.com/urfave/cli/v2"
)

// serveTLS loads --tls-cert and --tls-key; nil without them.
func serveTLS(c *cli.Context) (*tls.Config, error) {
	cert, key := c.String("tls-cert"), c.String("tls-key")
	if (cert == "") != (key == "") {
		return nil, usagef("--tls-cert and --tls-key go together: give both, or neither for plain HTTP")
	}
	if cert == "" {
		return nil, nil
	}
	return serve.TLSConfig(cert, key, func(err error) {
		fmt.Fprintf(c.App.ErrWriter, "Warning: replaced --tls-cert/--tls-key not used: %v\n", err)
	})
}

// listen opens addr, which must be host:port, warning when it is every interface.
func listen(c *cli.Context, addr string, tlsConfig *tls.Config) (net.Listener, error) {
	host, err := checkListenAddress("listen", addr, "8080")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError("listen", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		fmt.Fprintf(c.App.ErrWriter, "Warning: listening on all interfaces (%s): "+
			"name the address BMCs and nodes reach with --listen HOST:PORT to keep the server off the others\n", ln.Addr())
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return ln, nil
}

func schemeOf(tls bool) string {
	if tls {
		return "https://"
	}
	return "http://"
}

// checkListenAddress refuses an address option that is not HOST:PORT, with examples on its
// port (a bare port is the usual slip) or on examplePort, and returns the host.
func checkListenAddress(flag, addr, examplePort string) (host string, err error) {
	host, _, err = net.SplitHostPort(addr)
	if err == nil {
		return host, nil
	}
	if _, perr := strconv.ParseUint(addr, 10, 16); perr == nil {
		examplePort = addr
	}
	return "", usagef("--%s %q is not HOST:PORT: write :%s to listen on every address, or 127.0.0.1:%s for this machine only",
		flag, addr, examplePort, examplePort)
}

// listenError says what to do when the address of an option cannot be listened on.
func listenError(flag, addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("--%s %s: %w; another program (another sno-iso serve?) listens there: stop it, or pick another port", flag, addr, err)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("--%s %s: %w; ports below 1024 need root (or CAP_NET_BIND_SERVICE): pick a port above 1023, such as 8080",
			flag, addr, err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("--%s %s: %w; no interface of this machine has that address: name one it has (ip address lists them), "+
			"or leave the host out to listen on every address", flag, addr, err)
	}
	return fmt.Errorf("--%s %s: %w", flag, addr, err)
}
