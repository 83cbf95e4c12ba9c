package coreos

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// BMC is how to reach a node's BMC over Redfish (sno.yaml `bmc`).
type BMC struct {
	// Address is the Redfish address as written (https://HOST, .../redfish/v1/Systems/ID,
	// or a Metal3 redfish-virtualmedia:// or idrac-virtualmedia:// form).
	Address string
	// CredentialsFile holds the account, resolved with ResolvePath; "" when not set.
	CredentialsFile string
	// SystemID names the System when the BMC manages several.
	SystemID string
	// Insecure skips verifying the BMC's TLS certificate.
	Insecure bool
	// CAFile is the PEM CA that signed the BMC's certificate, resolved with ResolvePath;
	// "" when not set.
	CAFile string
	// EjectAfterInstall (`ejectAfterInstall`) takes the virtual media away and clears the boot
	// override once the node reports its disk written; nil means: when the BMC's credentials
	// are known.
	EjectAfterInstall *bool
}

var bmcKeys = []string{"address", "credentialsFile", "systemID", "insecure", "caFile", "ejectAfterInstall"}

func (p *configParser) bmc(n *yaml.Node, cfg *Config) error {
	b := &BMC{}
	if err := p.walkMapping(n, bmcKey, bmcKeys, func(key string, v *yaml.Node) error {
		if v.Tag == "!!null" {
			return nil
		}
		var err error
		switch key {
		case "address":
			if b.Address, err = p.str(v, bmcKey+".address"); err == nil && !strings.Contains(b.Address, "://") {
				err = p.errorf(v, "%s.address %q has no scheme: write https://%s", bmcKey, b.Address, b.Address)
			}
		case "credentialsFile", "caFile":
			var path string
			if path, err = p.str(v, bmcKey+"."+key); err == nil {
				if path == "" {
					return p.errorf(v, "%s.%s is empty: name the file or leave the key out", bmcKey, key)
				}
				if key == "caFile" {
					b.CAFile = cfg.ResolvePath(path)
				} else {
					b.CredentialsFile = cfg.ResolvePath(path)
				}
			}
		case "systemID":
			b.SystemID, err = p.str(v, bmcKey+".systemID")
		case "insecure":
			b.Insecure, err = p.boolean(v, bmcKey+".insecure")
		case "ejectAfterInstall":
			var eject bool
			eject, err = p.boolean(v, bmcKey+".ejectAfterInstall")
			b.EjectAfterInstall = &eject
		}
		return err
	}); err != nil {
		return err
	}
	if b.Address == "" {
		return p.errorf(n, "%s needs an address, such as address: https://10.0.0.5", bmcKey)
	}
	if b.Insecure && b.CAFile != "" {
		return p.errorf(n, "%s.insecure skips the certificate check that %s.caFile is for: keep one of them", bmcKey, bmcKey)
	}
	cfg.BMC = b
	return nil
}
