package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/sno-iso/sno-iso/nodedir"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/sno-iso/sno-iso/redfish"
	"github.com/urfave/cli/v2"
)

// ejectTimeout bounds one eject after install: it must end within the reboot delay.
const ejectTimeout = 50 * time.Second

// errNoEject says why a node's media are not ejected after its install.
var errNoEject = errors.New("not ejected")

// ejectOnInstallDone is serve's OnReport: when a node whose sno.yaml has a bmc section
// reports install-done, its virtual media are ejected and its boot override cleared during
// the reboot delay, in the background; the outcome goes to serve's log.
func ejectOnInstallDone(c *cli.Context) func(string, reports.Record, func(string, ...any)) {
	nodesDir, stderr := c.String("nodes"), c.App.ErrWriter
	return func(name string, rec reports.Record, logf func(string, ...any)) {
		if rec.Phase != reports.InstallDone {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), ejectTimeout)
			defer cancel()
			res, err := ejectAfterInstall(ctx, filepath.Join(nodesDir, name), stderr)
			switch {
			case errors.Is(err, errNoEject):
				logf("node %s installed: media %v", name, err)
			case err != nil:
				logf("node %s installed: ejecting its media failed: %v", name, err)
			default:
				logf("node %s installed: %s", name, describeEject(res))
			}
		}()
	}
}

func describeEject(res *redfish.AfterInstallResult) string {
	msg := fmt.Sprintf("ejected %d virtual media", len(res.Eject.Ejected))
	if res.OverrideCleared {
		msg += ", boot override cleared"
	} else {
		msg += ", no boot override to clear"
	}
	return msg
}

// ejectAfterInstall ejects the virtual media of the node in nodeDir and clears its boot
// override through the BMC its sno.yaml names, unless bmc.ejectAfterInstall is false or,
// unset, the BMC's credentials are unknown (errNoEject says which).
func ejectAfterInstall(ctx context.Context, nodeDir string, stderr io.Writer) (*redfish.AfterInstallResult, error) {
	b, err := nodedir.LoadBMC(nodeDir)
	switch {
	case errors.Is(err, nodedir.ErrNoBMC):
		return nil, fmt.Errorf("%w: %v", errNoEject, err)
	case err != nil:
		return nil, err
	case b.EjectAfterInstall != nil && !*b.EjectAfterInstall:
		return nil, fmt.Errorf("%w: its %s says bmc.ejectAfterInstall: false", errNoEject, nodedir.ConfigFile)
	}
	creds, _, err := bmcCredentials("", b.CredentialsFile, b.Config+" bmc.credentialsFile", b.Dir, stderr)
	if err != nil {
		return nil, err
	}
	if creds.Username == "" && b.EjectAfterInstall == nil {
		return nil, fmt.Errorf("%w: the BMC's credentials are unknown (set bmc.credentialsFile, or bmc.ejectAfterInstall: true for a BMC that "+
			"asks for none)", errNoEject)
	}
	addr, err := redfish.ParseAddress(b.Address)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := bmcTLS(b.Insecure, b.CAFile, b.Config+" bmc.caFile", b.Dir)
	if err != nil {
		return nil, err
	}
	client := redfish.New(addr, redfish.Options{Credentials: creds, TLS: tlsConfig})
	res, err := client.EjectAfterInstall(ctx, b.SystemID)
	logout, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client.Close(logout)
	return res, err
}
