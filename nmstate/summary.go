package nmstate

import (
	"bufio"
	"bytes"
	"strings"
)

// Profile summarises a NetworkManager keyfile, generated or hand-written: what a user checks
// before booting a node with it.
type Profile struct {
	File string `json:"file"`
	ID   string `json:"id"`
	Type string `json:"type"`
	// Interface is the kernel name the profile binds to; MAC the NIC's MAC when it binds by
	// MAC instead.
	Interface  string  `json:"interface,omitempty"`
	MAC        string  `json:"macAddress,omitempty"`
	Controller string  `json:"controller,omitempty"`
	IPv4       *Family `json:"ipv4,omitempty"`
	IPv6       *Family `json:"ipv6,omitempty"`
}

// Family is a profile's settings of one IP family.
type Family struct {
	Method    string   `json:"method"`
	Addresses []string `json:"addresses,omitempty"`
	Gateways  []string `json:"gateways,omitempty"`
	DNS       []string `json:"dns,omitempty"`
}

// Summarize reads the settings of a keyfile that Profile reports; file is its name.
// Unknown sections and keys are ignored: it describes, NetworkManager judges.
func Summarize(file string, data []byte) Profile {
	p := Profile{File: file}
	section := ""
	fams := map[string]*Family{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch section {
		case "connection":
			switch key {
			case "id":
				p.ID = value
			case "type":
				p.Type = value
			case "interface-name":
				p.Interface = value
			case "master", "controller":
				p.Controller = value
			}
		case "ethernet", "802-3-ethernet":
			if key == "mac-address" {
				p.MAC = value
			}
		case "ipv4", "ipv6":
			f := fams[section]
			if f == nil {
				f = &Family{}
				fams[section] = f
			}
			f.add(key, value, section == "ipv6")
		}
	}
	p.IPv4, p.IPv6 = fams["ipv4"], fams["ipv6"]
	return p
}

func (f *Family) add(key, value string, v6 bool) {
	list := func(v string) []string {
		return strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' })
	}
	defaultRoute := "0.0.0.0/0"
	if v6 {
		defaultRoute = "::/0"
	}
	switch {
	case key == "method":
		f.Method = value
	case key == "gateway":
		f.Gateways = append(f.Gateways, value)
	case key == "dns":
		f.DNS = append(f.DNS, list(value)...)
	case strings.HasPrefix(key, "address") && !strings.Contains(key, "_"):
		// addressN=IP/PREFIX[,GATEWAY]
		parts := list(value)
		if len(parts) > 0 {
			f.Addresses = append(f.Addresses, parts[0])
		}
		if len(parts) > 1 {
			f.Gateways = append(f.Gateways, parts[1])
		}
	case strings.HasPrefix(key, "route") && !strings.Contains(key, "_"):
		// routeN=DEST,NEXTHOP[,METRIC]: a default route's next hop is a gateway.
		if parts := list(value); len(parts) > 1 && parts[0] == defaultRoute {
			f.Gateways = append(f.Gateways, parts[1])
		}
	}
}
