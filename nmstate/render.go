package nmstate

import (
	"crypto/sha1"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Keyfile is one NetworkManager connection profile: its file name (NAME.nmconnection, as
// nmstatectl gc names it) and its contents. Written to disk it must be 0600 and owned by
// root, or NetworkManager ignores it.
type Keyfile struct {
	Name string
	Data []byte
}

// dnsPriority is what nmstate gives the profiles that carry the document's DNS servers, so
// that they win over servers learnt by DHCP on other interfaces.
const dnsPriority = "40"

// defaultRulePriority is the first priority of rules the document gives none.
const defaultRulePriority = 30000

// dhcpForever is the dhcp-timeout nmstate sets: keep asking rather than fail the profile.
const dhcpForever = "2147483647"

// Keyfiles renders the document's profiles, one per interface that is not absent, in
// document order (the ports a bond or bridge adds last).
func (d *Document) Keyfiles() []Keyfile {
	dnsV4, dnsV6 := d.dnsInterfaces()
	rules := d.placeRules()
	var out []Keyfile
	for _, iface := range d.Interfaces {
		if iface.State == StateAbsent {
			continue
		}
		kf := &keyfile{}
		d.connection(kf, iface)
		if iface.Controller == "" {
			for _, v6 := range []bool{false, true} {
				s := kf.section(family(v6))
				d.ipSection(s, iface, v6)
				if (v6 && iface.Name == dnsV6) || (!v6 && iface.Name == dnsV4) {
					d.dnsSettings(s, v6, dnsV4)
				}
				for i, r := range rules[iface.Name] {
					if r.IPv6() == v6 {
						s.set(fmt.Sprintf("routing-rule%d", i+1), r.text(i))
					}
				}
			}
		}
		out = append(out, Keyfile{Name: iface.Name + ".nmconnection", Data: kf.bytes()})
	}
	return out
}

func (d *Document) connection(kf *keyfile, iface *Interface) {
	c := kf.section("connection")
	c.set("id", iface.Name)
	c.set("uuid", profileUUID(iface.Type, iface.Name))
	c.set("type", nmType(iface.Type))
	if !iface.MatchMAC {
		c.set("interface-name", iface.Name)
	}
	c.set("autoconnect", strconv.FormatBool(iface.State == StateUp))
	if iface.Bond != nil || iface.Bridge != nil {
		c.set("autoconnect-slaves", "1")
	}
	if iface.Controller != "" {
		// master and slave-type: NetworkManager 1.42 reads only these names, later ones
		// read them as controller and port-type.
		c.set("master", iface.Controller)
		c.set("slave-type", nmType(d.Find(iface.Controller).Type))
	}
	eth := kf.section("ethernet")
	if iface.MTU > 0 {
		eth.set("mtu", strconv.Itoa(iface.MTU))
	}
	if iface.MAC != "" {
		if iface.MatchMAC {
			eth.set("mac-address", iface.MAC)
		} else {
			eth.set("cloned-mac-address", iface.MAC)
		}
	}
	if b := iface.Bond; b != nil {
		s := kf.section("bond")
		s.set("mode", b.Mode)
		for _, o := range b.Options {
			s.set(o.Name, o.Value)
		}
	}
	if v := iface.VLAN; v != nil {
		s := kf.section("vlan")
		s.set("parent", v.Base)
		s.set("id", strconv.Itoa(v.ID))
	}
	if b := iface.Bridge; b != nil {
		s := kf.section("bridge")
		for _, o := range b.Options {
			s.set(o.Name, o.Value)
		}
	}
}

// ipSection writes [ipv4] or [ipv6] as nmstate does: no section in the document, or
// enabled: false, is disabled; DHCP is auto; static addresses or routes are manual; an
// enabled family with none of them is disabled (IPv4) or link-local (IPv6).
func (d *Document) ipSection(s *section, iface *Interface, v6 bool) {
	ip := iface.ip(v6)
	routes := d.routesOf(iface.Name, v6)
	method := "disabled"
	switch {
	case ip == nil || !ip.Enabled:
	case v6 && ip.DHCP && ip.Autoconf:
		method = "auto"
	case v6 && ip.DHCP:
		method = "dhcp"
	case !v6 && ip.DHCP:
		method = "auto"
	case len(ip.Addresses) > 0 || len(routes) > 0:
		method = "manual"
	case v6:
		method = "link-local"
	}
	s.set("method", method)
	if method == "disabled" {
		return
	}
	for i, a := range ip.Addresses {
		s.set(fmt.Sprintf("address%d", i+1), a.String())
	}
	if v6 {
		s.set("addr-gen-mode", "eui64")
	}
	if ip.DHCP || ip.Autoconf {
		s.set("dhcp-timeout", dhcpForever)
		if v6 {
			s.set("dhcp-duid", "ll")
			s.set("ra-timeout", dhcpForever)
		} else {
			s.set("dhcp-client-id", "mac")
		}
		flag := func(key string, v *bool) {
			if v != nil {
				s.set(key, strconv.FormatBool(!*v))
			}
		}
		flag("ignore-auto-dns", ip.AutoDNS)
		flag("never-default", ip.AutoGateway)
		flag("ignore-auto-routes", ip.AutoRoutes)
	}
	for i, r := range routes {
		s.set(fmt.Sprintf("route%d", i+1), r.text())
		if r.Table != 0 {
			s.set(fmt.Sprintf("route%d_options", i+1), "table="+strconv.Itoa(r.Table))
		}
	}
}

func (d *Document) routesOf(name string, v6 bool) []Route {
	var out []Route
	for _, r := range d.Routes {
		if r.Interface == name && r.Destination.Addr().Is6() == v6 {
			out = append(out, r)
		}
	}
	return out
}

// text is the route as a keyfile value: DEST,NEXTHOP[,METRIC].
func (r Route) text() string {
	v := r.Destination.String()
	nh := r.NextHop
	if !nh.IsValid() && r.Metric >= 0 {
		nh = netip.IPv4Unspecified()
		if r.Destination.Addr().Is6() {
			nh = netip.IPv6Unspecified()
		}
	}
	if nh.IsValid() {
		v += "," + nh.String()
	}
	if r.Metric >= 0 {
		v += "," + strconv.Itoa(r.Metric)
	}
	return v
}

// text is the rule in NetworkManager's routing-rule syntax; i is its place in the
// document, for the default priority.
func (r RouteRule) text(i int) string {
	prio := r.Priority
	if prio < 0 {
		prio = defaultRulePriority + i
	}
	v := "priority " + strconv.Itoa(prio)
	if r.From.IsValid() {
		v += " from " + r.From.String()
	}
	if r.To.IsValid() {
		v += " to " + r.To.String()
	}
	table := r.Table
	if table == 0 {
		table = 254
	}
	return v + " table " + strconv.Itoa(table)
}

// placeRules gives each rule to a profile, which NetworkManager needs to apply it: the
// interface with a route in the rule's table, else the first that has the family enabled.
func (d *Document) placeRules() map[string][]RouteRule {
	out := map[string][]RouteRule{}
	for _, rule := range d.Rules {
		name := ""
		for _, r := range d.Routes {
			if r.Table == rule.Table && r.Table != 0 && r.Destination.Addr().Is6() == rule.IPv6() {
				name = r.Interface
				break
			}
		}
		if name == "" {
			name = d.firstWith(rule.IPv6(), false)
		}
		out[name] = append(out[name], rule)
	}
	return out
}

// dnsInterfaces chooses the profiles that carry the DNS servers of each family, as nmstate
// does: the first interface with a default route of the family, else the first with the
// family enabled.
func (d *Document) dnsInterfaces() (v4, v6 string) {
	if len(d.DNS.Servers) == 0 && len(d.DNS.Search) == 0 {
		return "", ""
	}
	return d.firstWith(false, true), d.firstWith(true, true)
}

func (d *Document) firstWith(v6, preferDefaultRoute bool) string {
	if preferDefaultRoute {
		for _, r := range d.Routes {
			if r.Destination.Bits() == 0 && r.Destination.Addr().Is6() == v6 {
				return r.Interface
			}
		}
	}
	for _, iface := range d.Interfaces {
		if ip := iface.ip(v6); ip != nil && ip.Enabled && iface.State != StateAbsent && iface.Controller == "" {
			return iface.Name
		}
	}
	return ""
}

func (d *Document) dnsSettings(s *section, v6 bool, dnsV4 string) {
	var servers []string
	for _, a := range d.DNS.Servers {
		if a.Is6() == v6 {
			servers = append(servers, a.String())
		}
	}
	if len(servers) > 0 {
		s.set("dns", strings.Join(servers, ";")+";")
	}
	// The search list goes with the IPv4 servers' profile when there is one.
	if len(d.DNS.Search) > 0 && (!v6 || dnsV4 == "") {
		s.set("dns-search", strings.Join(d.DNS.Search, ";")+";")
	}
	if len(servers) > 0 || s.has("dns-search") {
		s.set("dns-priority", dnsPriority)
	}
}

func nmType(nmstateType string) string {
	switch nmstateType {
	case TypeBridge:
		return "bridge"
	}
	return nmstateType
}

// profileUUID is the stable UUID nmstatectl gc gives a profile: version 5 in the URL
// namespace, of "TYPE://NAME".
func profileUUID(ifaceType, name string) string {
	ns := [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(ifaceType + "://" + name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// keyfile is an INI document in the order its sections and keys were first set; empty
// sections are left out.
type keyfile struct{ sections []*section }

type section struct {
	name string
	keys []string
	vals map[string]string
}

func (k *keyfile) section(name string) *section {
	for _, s := range k.sections {
		if s.name == name {
			return s
		}
	}
	s := &section{name: name, vals: map[string]string{}}
	k.sections = append(k.sections, s)
	return s
}

func (s *section) set(key, value string) {
	if _, ok := s.vals[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.vals[key] = value
}

func (s *section) has(key string) bool { _, ok := s.vals[key]; return ok }

func (k *keyfile) bytes() []byte {
	var b strings.Builder
	for _, s := range k.sections {
		if len(s.keys) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, key := range s.keys {
			fmt.Fprintf(&b, "%s=%s\n", key, s.vals[key])
		}
	}
	return []byte(b.String())
}
