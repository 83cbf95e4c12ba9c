package nmstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/sno-iso/sno-iso/internal/suggest"
	"gopkg.in/yaml.v3"
)

// MaxDocumentSize bounds an NMState document; real ones are a few KiB.
const MaxDocumentSize = 16 << 20

// The keys of each level of a document: those this package reads, and those nmstate knows
// that it refuses as not supported (they are also candidates for "did you mean").
var (
	topKeys           = []string{"interfaces", "dns-resolver", "routes", "route-rules"}
	topUnsupported    = []string{"hostname", "ovs-db", "ovn", "dispatch"}
	dnsKeys           = []string{"config"}
	dnsUnsupported    = []string{"running"}
	dnsConfigKeys     = []string{"server", "search"}
	dnsConfigUnsupp   = []string{"options"}
	routesKeys        = []string{"config"}
	routesUnsupported = []string{"running"}
	routeKeys         = []string{"destination", "next-hop-address", "next-hop-interface", "metric", "table-id"}
	routeUnsupported  = []string{
		"state", "weight", "route-type", "cwnd", "initcwnd", "initrwnd", "mtu", "quickack", "advmss", "source",
		"vrf-name",
	}
	ruleKeys        = []string{"ip-from", "ip-to", "priority", "route-table"}
	ruleUnsupported = []string{"state", "family", "fwmark", "fwmask", "iif", "action", "suppress-prefix-length"}
	ifaceKeys       = []string{
		"name", "type", "state", "mtu", "mac-address", "identifier", "ipv4", "ipv6", "link-aggregation", "vlan", "bridge",
	}
	ifaceUnsupported = []string{
		"description", "profile-name", "min-mtu", "max-mtu", "accept-all-mac-addresses", "copy-mac-from", "controller",
		"ethtool", "lldp", "mptcp", "802.1x", "ovs-db", "dispatch", "wait-ip", "permanent-mac-address", "ethernet",
		"veth", "vxlan", "infiniband", "mac-vlan", "mac-vtap", "vrf", "ipvlan", "macsec", "hsr", "ipsec", "wireguard",
		"patch", "dpdk",
	}
	ipKeys        = []string{"enabled", "dhcp", "autoconf", "address", "auto-dns", "auto-gateway", "auto-routes"}
	ipUnsupported = []string{
		"auto-route-table-id", "auto-route-metric", "dhcp-client-id", "dhcp-duid", "addr-gen-mode",
		"dhcp-send-hostname", "dhcp-custom-hostname", "allow-extra-address", "token", "dns", "route-rules",
	}
	addressKeys        = []string{"ip", "prefix-length"}
	addressUnsupported = []string{"valid-life-time", "preferred-life-time"}
	bondKeys           = []string{"mode", "options", "port", "ports"}
	bondUnsupported    = []string{"ports-config"}
	vlanKeys           = []string{"base-iface", "id"}
	vlanUnsupported    = []string{"protocol", "reorder-headers", "loose-binding", "registration-protocol"}
	bridgeKeys         = []string{"options", "port"}
	bridgeUnsupported  = []string{"ports"}
	bridgeOptKeys      = []string{"stp"}
	bridgeOptUnsupp    = []string{
		"mac-ageing-time", "group-forward-mask", "group-addr", "hash-max", "multicast-snooping", "multicast-router",
		"multicast-querier", "vlan-protocol", "vlan-default-pvid",
	}
	stpKeys          = []string{"enabled", "priority", "forward-delay", "hello-time", "max-age"}
	bridgePortKeys   = []string{"name"}
	bridgePortUnsupp = []string{"stp-hairpin-mode", "stp-path-cost", "stp-priority", "vlan"}
	// bondOptions are the bond options NetworkManager takes, with the kernel's names.
	bondOptions = []string{"miimon", "updelay", "downdelay", "primary", "primary_reselect", "lacp_rate", "xmit_hash_policy",
		"arp_interval", "arp_ip_target", "arp_validate", "arp_all_targets", "arp_missed_max", "fail_over_mac", "ad_select",
		"ad_actor_sys_prio", "ad_actor_system", "ad_user_port_key", "min_links", "all_slaves_active", "use_carrier",
		"resend_igmp", "num_grat_arp", "num_unsol_na", "peer_notif_delay", "tlb_dynamic_lb", "packets_per_slave", "lp_interval"}
	bondModes = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}
	// otherTypes are interface types nmstate knows and this package does not render.
	otherTypes = []string{"ovs-bridge", "ovs-interface", "ipsec", "infiniband", "wireguard", "vxlan", "mac-vlan", "mac-vtap",
		"vrf", "veth", "dummy", "loopback", "team", "hsr", "macsec", "ipvlan", "xfrm", "unknown"}
)

// Parse reads an NMState document, YAML or JSON; file names it in errors. It checks every
// key and value, and the document as a whole (Validate), before returning it.
func Parse(file string, data []byte) (*Document, error) {
	p := &parser{file: file}
	root, err := p.decode(data, "the document is empty: give at least `interfaces:`")
	if err != nil {
		return nil, err
	}
	doc := &Document{File: file}
	if err := p.document(root, doc); err != nil {
		return nil, err
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return doc, nil
}

// decode reads the one YAML (or JSON) document of a file of at most MaxDocumentSize bytes;
// empty says what is missing when there is nothing.
func (p *parser) decode(data []byte, empty string) (*yaml.Node, error) {
	if len(data) > MaxDocumentSize {
		return nil, p.fail(nil, "", "", fmt.Sprintf("the file is %d bytes, larger than the %d MiB it may be", len(data),
			MaxDocumentSize>>20))
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.fail(nil, "", "", empty)
		}
		return nil, p.fail(nil, "", "", "not YAML or JSON: "+strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		return nil, p.fail(&second, "", "", "more than one YAML document: give one per file")
	}
	return root.Content[0], nil
}

// ParseNode reads an NMState document that is a part of a larger YAML file, such as
// sno.yaml's networkConfig or an AgentConfig host's; file names that file in errors and
// path the place in it (hosts[0].networkConfig).
func ParseNode(file, path string, n *yaml.Node) (*Document, error) {
	p := &parser{file: file, prefix: path}
	doc := &Document{File: file}
	if err := p.document(n, doc); err != nil {
		return nil, err
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return doc, nil
}

type parser struct {
	file   string
	prefix string // the path of the document within its file
}

type field struct {
	key       string
	keyNode   *yaml.Node
	value     *yaml.Node
	path      string
	valueLine int
}

func (p *parser) path(path string) string {
	switch {
	case p.prefix == "":
		return path
	case path == "":
		return p.prefix
	case strings.HasPrefix(path, "["):
		return p.prefix + path
	}
	return p.prefix + "." + path
}

func (p *parser) fail(n *yaml.Node, path, value, msg string) *Error {
	e := &Error{File: p.file, Path: p.path(path), Value: value, Msg: msg}
	if n != nil {
		e.Line = n.Line
	}
	return e
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// node resolves what a value may not be: an alias (expanding them is how YAML bombs work,
// and no NMState document needs one).
func (p *parser) node(n *yaml.Node, path string) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		return nil, p.fail(n, path, "*"+n.Value, "YAML aliases are not supported in NMState documents: write the value out")
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return p.node(n.Content[0], path)
	}
	return n, nil
}

// fields checks that n is a mapping whose keys are all known, and returns its entries with
// a value, in order.
func (p *parser) fields(n *yaml.Node, path string, known, unsupported []string) ([]field, error) {
	n, err := p.node(n, path)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		what := "a mapping of keys"
		if path == "" {
			what = "an NMState document (a mapping with `interfaces:`)"
		}
		return nil, p.fail(n, path, "", "must be "+what+", not "+kindName(n))
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.fail(k, path, "", "keys must be names, not "+kindName(k))
		}
		key := k.Value
		fp := join(path, key)
		if seen[key] {
			return nil, p.fail(k, fp, "", "is given twice")
		}
		seen[key] = true
		switch {
		case slices.Contains(known, key):
		case slices.Contains(unsupported, key):
			e := p.fail(k, fp, "", "is an nmstate setting sno-iso does not convert; write a NetworkManager keyfile for this interface instead")
			e.Unsupported = key
			return nil, e
		default:
			msg := "unknown key"
			if s := suggest.Nearest(key, append(slices.Clone(known), unsupported...)); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; known keys here: " + strings.Join(known, ", ")
			}
			return nil, p.fail(k, fp, "", msg)
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		if v, err = p.node(v, fp); err != nil {
			return nil, err
		}
		out = append(out, field{key: key, keyNode: k, value: v, path: fp, valueLine: v.Line})
	}
	return out, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "an alias"
}

func (p *parser) list(f field) ([]*yaml.Node, error) {
	if f.value.Kind != yaml.SequenceNode {
		return nil, p.fail(f.value, f.path, "", "must be a list, not "+kindName(f.value))
	}
	out := make([]*yaml.Node, len(f.value.Content))
	for i, n := range f.value.Content {
		var err error
		if out[i], err = p.node(n, fmt.Sprintf("%s[%d]", f.path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *parser) scalar(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.fail(n, path, "", "must be a single value, not "+kindName(n))
	}
	return n.Value, nil
}

func (p *parser) str(f field) (string, error) { return p.scalar(f.value, f.path) }

// boolean reads true or false; like nmstate, the strings "true" and "false" count too
// (coreos-installer's own JSON example quotes them).
func (p *parser) boolean(f field) (bool, error) {
	v, err := p.str(f)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(v) {
	case "true", "yes":
		return true, nil
	case "false", "no":
		return false, nil
	}
	return false, p.fail(f.value, f.path, v, "must be true or false")
}

func (p *parser) boolPtr(f field) (*bool, error) {
	b, err := p.boolean(f)
	return &b, err
}

// integer reads a whole number within [lo, hi]; a quoted number counts, as in nmstate.
func (p *parser) integer(f field, lo, hi int) (int, error) {
	v, err := p.str(f)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		return 0, p.fail(f.value, f.path, v, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
	}
	return int(n), nil
}

func (p *parser) document(n *yaml.Node, doc *Document) error {
	fields, err := p.fields(n, "", topKeys, topUnsupported)
	if err != nil {
		return err
	}
	for _, f := range fields {
		switch f.key {
		case "interfaces":
			items, err := p.list(f)
			if err != nil {
				return err
			}
			for i, item := range items {
				iface, err := p.iface(item, fmt.Sprintf("interfaces[%d]", i))
				if err != nil {
					return err
				}
				doc.Interfaces = append(doc.Interfaces, iface)
			}
		case "dns-resolver":
			if err := p.dns(f, &doc.DNS); err != nil {
				return err
			}
		case "routes":
			if err := p.routes(f, doc); err != nil {
				return err
			}
		case "route-rules":
			if err := p.rules(f, doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// iface reads one interface; a setting it does not convert is named with the interface.
func (p *parser) iface(n *yaml.Node, path string) (*Interface, error) {
	iface, err := p.ifaceSettings(n, path)
	var e *Error
	if errors.As(err, &e) && e.Unsupported != "" && !strings.HasPrefix(e.Msg, "interface ") {
		e.Msg = fmt.Sprintf("interface %s: %s", nameOf(n), e.Msg)
	}
	return iface, err
}

// nameOf is the value of a mapping's name key, for messages: "" when there is none.
func nameOf(n *yaml.Node) string {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			return n.Content[i+1].Value
		}
	}
	return ""
}

func (p *parser) ifaceSettings(n *yaml.Node, path string) (*Interface, error) {
	fields, err := p.fields(n, path, ifaceKeys, ifaceUnsupported)
	if err != nil {
		return nil, err
	}
	iface := &Interface{State: StateUp, Line: n.Line}
	byKey := map[string]field{}
	for _, f := range fields {
		byKey[f.key] = f
	}
	// name and type first: the other settings' errors and checks depend on them.
	if f, ok := byKey["name"]; ok {
		if iface.Name, err = p.str(f); err != nil {
			return nil, err
		}
	}
	if iface.Name == "" {
		return nil, p.fail(n, path+".name", "", "every interface needs a name")
	}
	if f, ok := byKey["type"]; ok {
		if iface.Type, err = p.str(f); err != nil {
			return nil, err
		}
		if slices.Contains(otherTypes, iface.Type) {
			e := p.fail(f.value, f.path, iface.Type, fmt.Sprintf("interface %s: type %s is not supported by sno-iso "+
				"(it converts ethernet, bond, vlan and linux-bridge); "+
				"write a NetworkManager keyfile for it and pass it with --network-keyfile", iface.Name, iface.Type))
			e.Unsupported = iface.Type
			return nil, e
		}
		if !slices.Contains([]string{TypeEthernet, TypeBond, TypeVLAN, TypeBridge}, iface.Type) {
			msg := "unknown interface type"
			if s := suggest.Nearest(iface.Type, []string{TypeEthernet, TypeBond, TypeVLAN, TypeBridge}); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, p.fail(f.value, f.path, iface.Type, msg)
		}
	}
	for _, f := range fields {
		switch f.key {
		case "state":
			if iface.State, err = p.str(f); err != nil {
				return nil, err
			}
			if !slices.Contains([]string{StateUp, StateDown, StateAbsent}, iface.State) {
				return nil, p.fail(f.value, f.path, iface.State, "must be up, down or absent")
			}
		case "mtu":
			if iface.MTU, err = p.integer(f, 68, 65535); err != nil {
				return nil, err
			}
		case "mac-address":
			v, err := p.str(f)
			if err != nil {
				return nil, err
			}
			if iface.MAC, err = normalizeMAC(v); err != nil {
				return nil, p.fail(f.value, f.path, v, err.Error())
			}
		case "identifier":
			v, err := p.str(f)
			if err != nil {
				return nil, err
			}
			switch v {
			case "name":
			case "mac-address":
				iface.MatchMAC = true
			default:
				return nil, p.fail(f.value, f.path, v, "must be name or mac-address")
			}
		case "ipv4", "ipv6":
			ip, err := p.ip(f, f.key == "ipv6")
			if err != nil {
				return nil, err
			}
			if f.key == "ipv4" {
				iface.IPv4 = ip
			} else {
				iface.IPv6 = ip
			}
		case "link-aggregation":
			if err := p.needType(iface, f, TypeBond); err != nil {
				return nil, err
			}
			if iface.Bond, err = p.bond(f); err != nil {
				return nil, err
			}
		case "vlan":
			if err := p.needType(iface, f, TypeVLAN); err != nil {
				return nil, err
			}
			if iface.VLAN, err = p.vlan(f); err != nil {
				return nil, err
			}
		case "bridge":
			if err := p.needType(iface, f, TypeBridge); err != nil {
				return nil, err
			}
			if iface.Bridge, err = p.bridge(f); err != nil {
				return nil, err
			}
		}
	}
	if iface.MatchMAC && iface.MAC == "" {
		return nil, p.fail(n, path+".identifier", "mac-address", "identifier: mac-address needs the interface's mac-address")
	}
	if iface.Type == "" && iface.State != StateAbsent {
		return nil, p.fail(n, path+".type", "", fmt.Sprintf("interface %s needs a type: ethernet, bond, vlan or linux-bridge", iface.Name))
	}
	return iface, nil
}

func (p *parser) needType(iface *Interface, f field, want string) error {
	if iface.Type != want {
		return p.fail(f.keyNode, f.path, "", fmt.Sprintf("is a setting of type %s interfaces; interface %s is type %q", want, iface.Name,
			iface.Type))
	}
	return nil
}

func (p *parser) ip(f field, v6 bool) (*IP, error) {
	known := ipKeys
	if !v6 {
		known = slices.DeleteFunc(slices.Clone(ipKeys), func(k string) bool { return k == "autoconf" })
	}
	fields, err := p.fields(f.value, f.path, known, ipUnsupported)
	if err != nil {
		return nil, err
	}
	ip := &IP{Line: f.value.Line}
	for _, g := range fields {
		switch g.key {
		case "enabled":
			ip.Enabled, err = p.boolean(g)
		case "dhcp":
			ip.DHCP, err = p.boolean(g)
		case "autoconf":
			ip.Autoconf, err = p.boolean(g)
		case "auto-dns":
			ip.AutoDNS, err = p.boolPtr(g)
		case "auto-gateway":
			ip.AutoGateway, err = p.boolPtr(g)
		case "auto-routes":
			ip.AutoRoutes, err = p.boolPtr(g)
		case "address":
			ip.Addresses, err = p.addresses(g, v6)
		}
		if err != nil {
			return nil, err
		}
	}
	return ip, nil
}

func (p *parser) addresses(f field, v6 bool) ([]netip.Prefix, error) {
	items, err := p.list(f)
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		fields, err := p.fields(item, path, addressKeys, addressUnsupported)
		if err != nil {
			return nil, err
		}
		var addr netip.Addr
		prefix := -1
		for _, g := range fields {
			switch g.key {
			case "ip":
				v, err := p.str(g)
				if err != nil {
					return nil, err
				}
				if addr, err = parseAddr(v, v6); err != nil {
					return nil, p.fail(g.value, g.path, v, err.Error())
				}
			case "prefix-length":
				max := 32
				if v6 {
					max = 128
				}
				if prefix, err = p.integer(g, 0, max); err != nil {
					return nil, err
				}
			}
		}
		if !addr.IsValid() || prefix < 0 {
			return nil, p.fail(item, path, "", "an address needs both ip and prefix-length")
		}
		out = append(out, netip.PrefixFrom(addr, prefix))
	}
	return out, nil
}

// parseAddr reads an IP address of the family (v6 or not), without a zone.
func parseAddr(v string, v6 bool) (netip.Addr, error) {
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, errors.New("is not an IP address")
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() != v6 {
		if v6 {
			return netip.Addr{}, errors.New("is not an IPv6 address")
		}
		return netip.Addr{}, errors.New("is not an IPv4 address")
	}
	return a, nil
}

// parsePrefix reads a network such as 192.0.2.0/24 or ::/0.
func parsePrefix(v string) (netip.Prefix, error) {
	pr, err := netip.ParsePrefix(v)
	if err != nil {
		if a, aerr := netip.ParseAddr(v); aerr == nil && a.Zone() == "" {
			return netip.PrefixFrom(a, a.BitLen()), nil
		}
		return netip.Prefix{}, errors.New("is not a network (address/prefix-length, such as 192.0.2.0/24)")
	}
	return pr, nil
}

// normalizeMAC checks an Ethernet MAC address and writes it as NetworkManager does.
func normalizeMAC(v string) (string, error) {
	parts := strings.Split(v, ":")
	if len(parts) != 6 {
		return "", errors.New("is not a MAC address (six hex bytes separated by colons)")
	}
	for _, b := range parts {
		if len(b) != 2 {
			return "", errors.New("is not a MAC address (six hex bytes separated by colons)")
		}
		if _, err := strconv.ParseUint(b, 16, 8); err != nil {
			return "", errors.New("is not a MAC address (six hex bytes separated by colons)")
		}
	}
	return strings.ToUpper(v), nil
}

func (p *parser) names(f field) ([]string, error) {
	items, err := p.list(f)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, item := range items {
		if out[i], err = p.scalar(item, fmt.Sprintf("%s[%d]", f.path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *parser) bond(f field) (*Bond, error) {
	fields, err := p.fields(f.value, f.path, bondKeys, bondUnsupported)
	if err != nil {
		return nil, err
	}
	b := &Bond{}
	for _, g := range fields {
		switch g.key {
		case "mode":
			if b.Mode, err = p.str(g); err != nil {
				return nil, err
			}
			if !slices.Contains(bondModes, b.Mode) {
				return nil, p.fail(g.value, g.path, b.Mode, "is not a bond mode; one of "+strings.Join(bondModes, ", "))
			}
		case "port", "ports":
			if b.Ports, err = p.names(g); err != nil {
				return nil, err
			}
		case "options":
			opts, err := p.fields(g.value, g.path, bondOptions, nil)
			if err != nil {
				return nil, err
			}
			for _, o := range opts {
				v, err := p.str(o)
				if err != nil {
					return nil, err
				}
				if v == "" || strings.ContainsAny(v, "\n\r,=") {
					return nil, p.fail(o.value, o.path, v, "is not a bond option value")
				}
				b.Options = append(b.Options, Option{Name: o.key, Value: v})
			}
		}
	}
	if b.Mode == "" {
		return nil, p.fail(f.value, f.path+".mode", "", "a bond needs a mode: one of "+strings.Join(bondModes, ", "))
	}
	return b, nil
}

func (p *parser) vlan(f field) (*VLAN, error) {
	fields, err := p.fields(f.value, f.path, vlanKeys, vlanUnsupported)
	if err != nil {
		return nil, err
	}
	v := &VLAN{ID: -1}
	for _, g := range fields {
		switch g.key {
		case "base-iface":
			v.Base, err = p.str(g)
		case "id":
			v.ID, err = p.integer(g, 0, 4094)
		}
		if err != nil {
			return nil, err
		}
	}
	if v.Base == "" {
		return nil, p.fail(f.value, f.path+".base-iface", "", "a VLAN needs its base-iface, the interface it is on")
	}
	if v.ID < 0 {
		return nil, p.fail(f.value, f.path+".id", "", "a VLAN needs its id (0 to 4094)")
	}
	return v, nil
}

func (p *parser) bridge(f field) (*Bridge, error) {
	fields, err := p.fields(f.value, f.path, bridgeKeys, bridgeUnsupported)
	if err != nil {
		return nil, err
	}
	b := &Bridge{}
	for _, g := range fields {
		switch g.key {
		case "port":
			items, err := p.list(g)
			if err != nil {
				return nil, err
			}
			for i, item := range items {
				path := fmt.Sprintf("%s[%d]", g.path, i)
				pf, err := p.fields(item, path, bridgePortKeys, bridgePortUnsupp)
				if err != nil {
					return nil, err
				}
				name := ""
				for _, h := range pf {
					if name, err = p.str(h); err != nil {
						return nil, err
					}
				}
				if name == "" {
					return nil, p.fail(item, path+".name", "", "a bridge port needs a name")
				}
				b.Ports = append(b.Ports, name)
			}
		case "options":
			opts, err := p.fields(g.value, g.path, bridgeOptKeys, bridgeOptUnsupp)
			if err != nil {
				return nil, err
			}
			for _, o := range opts {
				if err := p.stp(o, b); err != nil {
					return nil, err
				}
			}
		}
	}
	return b, nil
}

// stp reads bridge.options.stp into the [bridge] settings, with the ranges the kernel takes.
func (p *parser) stp(f field, b *Bridge) error {
	fields, err := p.fields(f.value, f.path, stpKeys, nil)
	if err != nil {
		return err
	}
	ranges := map[string][2]int{"priority": {0, 65535}, "forward-delay": {2, 30}, "hello-time": {1, 10}, "max-age": {6, 40}}
	for _, g := range fields {
		if g.key == "enabled" {
			on, err := p.boolean(g)
			if err != nil {
				return err
			}
			b.Options = append(b.Options, Option{Name: "stp", Value: strconv.FormatBool(on)})
			continue
		}
		r := ranges[g.key]
		v, err := p.integer(g, r[0], r[1])
		if err != nil {
			return err
		}
		b.Options = append(b.Options, Option{Name: g.key, Value: strconv.Itoa(v)})
	}
	return nil
}

func (p *parser) dns(f field, dns *DNS) error {
	fields, err := p.fields(f.value, f.path, dnsKeys, dnsUnsupported)
	if err != nil {
		return err
	}
	for _, g := range fields {
		conf, err := p.fields(g.value, g.path, dnsConfigKeys, dnsConfigUnsupp)
		if err != nil {
			return err
		}
		for _, h := range conf {
			items, err := p.names(h)
			if err != nil {
				return err
			}
			for i, v := range items {
				path := fmt.Sprintf("%s[%d]", h.path, i)
				line := h.value.Content[i]
				if h.key == "server" {
					a, err := netip.ParseAddr(v)
					if err != nil || a.Zone() != "" {
						return p.fail(line, path, v, "is not an IP address")
					}
					dns.Servers = append(dns.Servers, a.Unmap())
					continue
				}
				if v == "" || strings.ContainsAny(v, " \t;,\n\r") {
					return p.fail(line, path, v, "is not a DNS domain")
				}
				dns.Search = append(dns.Search, v)
			}
		}
	}
	return nil
}

// configEntries calls each for every entry of a routes or route-rules section's config
// list, with the entry's checked fields.
func (p *parser) configEntries(f field, keys, unsupported []string, each func(item *yaml.Node, path string, fields []field) error) error {
	sections, err := p.fields(f.value, f.path, routesKeys, routesUnsupported)
	if err != nil {
		return err
	}
	for _, g := range sections {
		items, err := p.list(g)
		if err != nil {
			return err
		}
		for i, item := range items {
			path := fmt.Sprintf("%s[%d]", g.path, i)
			fields, err := p.fields(item, path, keys, unsupported)
			if err != nil {
				return err
			}
			if err := each(item, path, fields); err != nil {
				return err
			}
		}
	}
	return nil
}

// network reads a network such as 192.0.2.0/24.
func (p *parser) network(f field) (netip.Prefix, error) {
	v, err := p.str(f)
	if err != nil {
		return netip.Prefix{}, err
	}
	pr, err := parsePrefix(v)
	if err != nil {
		return netip.Prefix{}, p.fail(f.value, f.path, v, err.Error())
	}
	return pr, nil
}

func (p *parser) routes(f field, doc *Document) error {
	return p.configEntries(f, routeKeys, routeUnsupported, func(item *yaml.Node, path string, fields []field) error {
		r := Route{Metric: -1, Line: item.Line}
		var err error
		for _, h := range fields {
			switch h.key {
			case "destination":
				r.Destination, err = p.network(h)
			case "next-hop-address":
				var v string
				if v, err = p.str(h); err == nil {
					a, perr := netip.ParseAddr(v)
					if perr != nil || a.Zone() != "" {
						return p.fail(h.value, h.path, v, "is not an IP address")
					}
					r.NextHop = a.Unmap()
				}
			case "next-hop-interface":
				r.Interface, err = p.str(h)
			case "metric":
				r.Metric, err = p.integer(h, 0, 1<<32-1)
			case "table-id":
				r.Table, err = p.integer(h, 0, 1<<32-1)
			}
			if err != nil {
				return err
			}
		}
		if !r.Destination.IsValid() {
			return p.fail(item, path+".destination", "", "a route needs a destination (0.0.0.0/0 or ::/0 for a default route)")
		}
		if r.NextHop.IsValid() && r.NextHop.Is6() != r.Destination.Addr().Is6() {
			return p.fail(item, path+".next-hop-address", r.NextHop.String(), "is not of the destination's address family")
		}
		doc.Routes = append(doc.Routes, r)
		return nil
	})
}

func (p *parser) rules(f field, doc *Document) error {
	return p.configEntries(f, ruleKeys, ruleUnsupported, func(item *yaml.Node, path string, fields []field) error {
		r := RouteRule{Priority: -1, Line: item.Line}
		var err error
		for _, h := range fields {
			switch h.key {
			case "ip-from":
				r.From, err = p.network(h)
			case "ip-to":
				r.To, err = p.network(h)
			case "priority":
				r.Priority, err = p.integer(h, 0, 1<<32-1)
			case "route-table":
				r.Table, err = p.integer(h, 1, 1<<32-1)
			}
			if err != nil {
				return err
			}
		}
		if !r.From.IsValid() && !r.To.IsValid() {
			return p.fail(item, path, "", "a route rule needs ip-from or ip-to")
		}
		if r.From.IsValid() && r.To.IsValid() && r.From.Addr().Is6() != r.To.Addr().Is6() {
			return p.fail(item, path+".ip-to", r.To.String(), "is not of ip-from's address family")
		}
		doc.Rules = append(doc.Rules, r)
		return nil
	})
}
