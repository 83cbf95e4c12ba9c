package nmstate

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// NIC maps an interface name of an NMState document to the MAC address of the NIC it
// means, as agent-config.yaml's hosts[].interfaces do.
type NIC struct {
	Name string
	MAC  string
}

// ParseNICs reads a list of {name, macAddress}, as agent-config's hosts[].interfaces and
// sno.yaml's interfaces have; path is where the list is, for errors.
func ParseNICs(file, path string, n *yaml.Node) ([]NIC, error) {
	p := &parser{file: file}
	items, err := p.list(field{path: path, value: n})
	if err != nil {
		return nil, err
	}
	var out []NIC
	for i, item := range items {
		ip := fmt.Sprintf("%s[%d]", path, i)
		fields, err := p.fields(item, ip, []string{"name", "macAddress"}, nil)
		if err != nil {
			return nil, err
		}
		var nic NIC
		for _, f := range fields {
			v, err := p.str(f)
			if err != nil {
				return nil, err
			}
			if f.key == "name" {
				nic.Name = v
			} else if nic.MAC, err = normalizeMAC(v); err != nil {
				return nil, p.fail(f.value, f.path, v, err.Error())
			}
		}
		if nic.Name == "" || nic.MAC == "" {
			return nil, p.fail(item, ip, "", "each interface needs a name and a macAddress")
		}
		for _, prev := range out {
			if prev.Name == nic.Name || prev.MAC == nic.MAC {
				return nil, p.fail(item, ip, nic.Name, fmt.Sprintf("names the NIC %s (%s) a second time", prev.Name, prev.MAC))
			}
		}
		out = append(out, nic)
	}
	return out, nil
}

// BindMACs makes the profile of each interface a NIC names match that NIC by its MAC
// address, whatever the kernel calls it on the host (identifier: mac-address). An
// interface that already sets a different mac-address is an error.
func (d *Document) BindMACs(nics []NIC) error {
	for _, nic := range nics {
		iface := d.Find(nic.Name)
		if iface == nil || iface.State == StateAbsent || iface.Type != TypeEthernet {
			continue
		}
		if iface.MAC != "" && iface.MAC != nic.MAC {
			return d.fail(iface.Line, iface.Name+" mac-address", iface.MAC,
				fmt.Sprintf("the interfaces list gives %s the MAC %s; make them agree", nic.Name, nic.MAC))
		}
		iface.MAC, iface.MatchMAC = nic.MAC, true
	}
	return nil
}

// IsAgentConfig reports whether data is an AgentConfig (kind: AgentConfig) rather than an
// NMState document, which has no kind.
func IsAgentConfig(data []byte) bool {
	var head struct {
		Kind string `yaml:"kind"`
	}
	return len(data) <= MaxDocumentSize && yaml.Unmarshal(data, &head) == nil && head.Kind == "AgentConfig"
}

// AgentHost is what sno-iso takes from one host of an agent-config.yaml.
type AgentHost struct {
	Hostname string
	// Network is the host's networkConfig with its interfaces bound to their MACs; nil
	// when the host has none.
	Network *Document
	NICs    []NIC
	// DeviceName is rootDeviceHints.deviceName, "" when not given.
	DeviceName string
	// OtherHints are the rootDeviceHints other than deviceName, which sno-iso does not use.
	OtherHints []string
}

// ParseAgentConfig reads the host of an AgentConfig document (kind: AgentConfig, as
// openshift-install's agent-based installer reads it): the one named hostname, or the only
// host when hostname is "".
func ParseAgentConfig(file string, data []byte, hostname string) (*AgentHost, error) {
	p := &parser{file: file}
	root, err := p.decode(data, "the file is empty: an AgentConfig needs hosts")
	if err != nil {
		return nil, err
	}
	// The agent installer's keys; only hosts matters here, the others are the installer's.
	fields, err := p.fields(root, "", []string{"apiVersion", "kind", "metadata", "rendezvousIP", "hosts",
		"additionalNTPSources", "bootArtifactsBaseURL", "minimalISO"}, nil)
	if err != nil {
		return nil, err
	}
	var hosts []*yaml.Node
	for _, f := range fields {
		switch f.key {
		case "kind":
			if v, _ := p.str(f); v != "AgentConfig" {
				return nil, p.fail(f.value, f.path, v, "is not an AgentConfig (kind: AgentConfig)")
			}
		case "hosts":
			if hosts, err = p.list(f); err != nil {
				return nil, err
			}
		}
	}
	names := make([]string, len(hosts))
	chosen := -1
	for i, h := range hosts {
		hf, err := p.fields(h, fmt.Sprintf("hosts[%d]", i), []string{"hostname", "role", "interfaces", "rootDeviceHints",
			"networkConfig"}, nil)
		if err != nil {
			return nil, err
		}
		for _, f := range hf {
			if f.key == "hostname" {
				if names[i], err = p.str(f); err != nil {
					return nil, err
				}
			}
		}
		if hostname != "" && names[i] == hostname || hostname == "" && len(hosts) == 1 {
			chosen = i
		}
	}
	switch {
	case len(hosts) == 0:
		return nil, p.fail(nil, "hosts", "", "the AgentConfig has no hosts: add the node under hosts, with its networkConfig")
	case chosen < 0 && hostname == "":
		return nil, p.fail(nil, "hosts", "", fmt.Sprintf("the AgentConfig has %d hosts (%s): choose one by its hostname", len(hosts),
			strings.Join(names, ", ")))
	case chosen < 0:
		return nil, p.fail(nil, "hosts", hostname, fmt.Sprintf("no host has this hostname; the hosts are %s", strings.Join(names, ", ")))
	}
	return p.agentHost(hosts[chosen], fmt.Sprintf("hosts[%d]", chosen))
}

func (p *parser) agentHost(n *yaml.Node, path string) (*AgentHost, error) {
	fields, err := p.fields(n, path, []string{"hostname", "role", "interfaces", "rootDeviceHints", "networkConfig"}, nil)
	if err != nil {
		return nil, err
	}
	h := &AgentHost{}
	for _, f := range fields {
		switch f.key {
		case "hostname":
			h.Hostname, _ = p.str(f)
		case "role":
			if v, err := p.str(f); err != nil || v != "master" {
				return nil, p.fail(f.value, f.path, v, "a single-node cluster's host is a master")
			}
		case "interfaces":
			if h.NICs, err = ParseNICs(p.file, f.path, f.value); err != nil {
				return nil, err
			}
		case "networkConfig":
			if h.Network, err = ParseNode(p.file, f.path, f.value); err != nil {
				return nil, err
			}
		case "rootDeviceHints":
			hints, err := p.fields(f.value, f.path, []string{"deviceName", "hctl", "model", "vendor", "serialNumber",
				"minSizeGigabytes", "wwn", "wwnWithExtension", "wwnVendorExtension", "rotational"}, nil)
			if err != nil {
				return nil, err
			}
			for _, g := range hints {
				if g.key == "deviceName" {
					if h.DeviceName, err = p.str(g); err != nil {
						return nil, err
					}
					continue
				}
				h.OtherHints = append(h.OtherHints, g.key)
			}
		}
	}
	if h.Network != nil {
		if err := h.Network.BindMACs(h.NICs); err != nil {
			return nil, err
		}
	}
	slices.Sort(h.OtherHints)
	return h, nil
}
