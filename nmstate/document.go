package nmstate

import "net/netip"

// Interface types this package renders, by their NMState names.
const (
	TypeEthernet = "ethernet"
	TypeBond     = "bond"
	TypeVLAN     = "vlan"
	TypeBridge   = "linux-bridge"
)

// Interface states.
const (
	StateUp     = "up"
	StateDown   = "down"
	StateAbsent = "absent"
)

// Document is one NMState document.
type Document struct {
	// File names the document in errors.
	File       string
	Interfaces []*Interface
	DNS        DNS
	Routes     []Route
	Rules      []RouteRule
}

// Interface is one entry of `interfaces`, or a port a bond or bridge names that the
// document does not describe (Implicit), which nmstate takes for an ethernet interface.
type Interface struct {
	Name  string
	Type  string
	State string
	MTU   int // 0: not set
	// MAC is mac-address; MatchMAC (identifier: mac-address) makes it the NIC the profile
	// binds to, otherwise it is the address to set on the NIC.
	MAC      string
	MatchMAC bool
	IPv4     *IP // nil: the section is absent
	IPv6     *IP
	Bond     *Bond
	VLAN     *VLAN
	Bridge   *Bridge
	Implicit bool
	Line     int
	// Controller is the bond or bridge the interface is a port of, "" for none.
	Controller string
}

// IP is an interface's ipv4 or ipv6 section.
type IP struct {
	Enabled   bool
	DHCP      bool
	Autoconf  bool // ipv6 only
	Addresses []netip.Prefix
	// AutoDNS, AutoGateway and AutoRoutes are nil when the document leaves them unset.
	AutoDNS, AutoGateway, AutoRoutes *bool
	Line                             int
}

// Bond is an interface's link-aggregation section.
type Bond struct {
	Mode    string
	Options []Option // in document order
	Ports   []string
}

// Option is one bond option.
type Option struct{ Name, Value string }

// VLAN is an interface's vlan section.
type VLAN struct {
	Base string
	ID   int
}

// Bridge is a linux-bridge interface's bridge section.
type Bridge struct {
	// Options are the [bridge] keyfile settings the document sets (stp, priority,
	// forward-delay, hello-time, max-age), in document order.
	Options []Option
	Ports   []string
}

// DNS is dns-resolver.config.
type DNS struct {
	Servers []netip.Addr
	Search  []string
}

// Route is one entry of routes.config.
type Route struct {
	Destination netip.Prefix
	NextHop     netip.Addr // invalid when unset
	Interface   string     // next-hop-interface, or the one chosen for it
	Metric      int        // -1: unset
	Table       int        // 0: unset (the main table)
	Line        int
}

// RouteRule is one entry of route-rules.config.
type RouteRule struct {
	From, To netip.Prefix // invalid when unset
	Priority int          // -1: unset
	Table    int          // 0: unset (the main table)
	Line     int
}

// Family says whether the rule is IPv6.
func (r RouteRule) IPv6() bool {
	if r.From.IsValid() {
		return r.From.Addr().Is6()
	}
	return r.To.IsValid() && r.To.Addr().Is6()
}

// Find returns the interface named name, or nil.
func (d *Document) Find(name string) *Interface {
	for _, i := range d.Interfaces {
		if i.Name == name {
			return i
		}
	}
	return nil
}
