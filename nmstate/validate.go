package nmstate

import (
	"fmt"
	"strings"
)

// maxNameLength is the kernel's limit on an interface name (IFNAMSIZ less the NUL).
const maxNameLength = 15

// Validate checks the document as a whole: names unique and usable, ports in one
// controller each, every VLAN's base, routes and DNS with an interface to carry them. It
// adds the ports a bond or bridge names and the document does not describe, as ethernet
// interfaces, and sets each port's Controller.
func (d *Document) Validate() error {
	seen := map[string]*Interface{}
	for _, iface := range d.Interfaces {
		if err := checkName(iface.Name, iface.MatchMAC); err != nil {
			return d.fail(iface.Line, "name", iface.Name, err.Error())
		}
		if first, dup := seen[iface.Name]; dup {
			return d.fail(iface.Line, "name", iface.Name, fmt.Sprintf("interface %s is described twice (first on line %d); merge the two",
				iface.Name, first.Line))
		}
		seen[iface.Name] = iface
	}
	if err := d.linkPorts(); err != nil {
		return err
	}
	for _, iface := range d.Interfaces {
		if err := d.checkInterface(iface); err != nil {
			return err
		}
	}
	if err := d.placeRoutes(); err != nil {
		return err
	}
	return d.checkCarriers()
}

// checkCarriers refuses DNS servers and route rules that no profile could carry: nothing of
// the document may be dropped.
func (d *Document) checkCarriers() error {
	for _, a := range d.DNS.Servers {
		if d.firstWith(a.Is6(), true) == "" {
			return d.fail(0, "dns-resolver.config.server", a.String(),
				fmt.Sprintf("no interface has %s enabled to carry this DNS server", family(a.Is6())))
		}
	}
	if len(d.DNS.Search) > 0 && d.firstWith(false, true) == "" && d.firstWith(true, true) == "" {
		return d.fail(0, "dns-resolver.config.search", "", "no interface has IP enabled to carry the DNS search domains")
	}
	for i, r := range d.Rules {
		if d.firstWith(r.IPv6(), false) == "" {
			return d.fail(r.Line, fmt.Sprintf("route-rules.config[%d]", i), "",
				fmt.Sprintf("no interface has %s enabled to carry this rule", family(r.IPv6())))
		}
	}
	return nil
}

func (d *Document) fail(line int, path, value, msg string) *Error {
	return &Error{File: d.File, Line: line, Path: path, Value: value, Msg: msg}
}

// checkName refuses a name NetworkManager or a file name cannot carry. A profile that
// matches its NIC by MAC uses the name only as its id, which may be longer.
func checkName(name string, byMAC bool) error {
	if name == "." || name == ".." {
		return fmt.Errorf("is not an interface name")
	}
	if !byMAC && len(name) > maxNameLength {
		return fmt.Errorf("is longer than the %d characters Linux allows an interface name", maxNameLength)
	}
	if len(name) > 200 {
		return fmt.Errorf("is too long for a profile name")
	}
	for _, r := range name {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`/\;,=[]#:"'`, r) {
			return fmt.Errorf("has %q, which an interface name cannot have", r)
		}
	}
	return nil
}

// linkPorts sets each port's controller, adding undescribed ports as ethernet interfaces.
func (d *Document) linkPorts() error {
	for _, ctrl := range append([]*Interface(nil), d.Interfaces...) {
		if ctrl.State == StateAbsent {
			continue
		}
		var ports []string
		kind := ""
		switch {
		case ctrl.Bond != nil:
			ports, kind = ctrl.Bond.Ports, "bond"
		case ctrl.Bridge != nil:
			ports, kind = ctrl.Bridge.Ports, "bridge"
		}
		for _, name := range ports {
			if name == ctrl.Name {
				return d.fail(ctrl.Line, ctrl.Name+" ports", name, fmt.Sprintf("%s %s cannot be its own port", kind, name))
			}
			port := d.Find(name)
			if port == nil {
				if err := checkName(name, false); err != nil {
					return d.fail(ctrl.Line, ctrl.Name+" ports", name, err.Error())
				}
				port = &Interface{Name: name, Type: TypeEthernet, State: StateUp, Implicit: true, Line: ctrl.Line}
				d.Interfaces = append(d.Interfaces, port)
			}
			if port.Controller != "" {
				return d.fail(ctrl.Line, ctrl.Name+" ports", name,
					fmt.Sprintf("interface %s is already a port of %s; an interface can be a port of one bond or bridge only", name,
						port.Controller))
			}
			if port.State == StateAbsent {
				return d.fail(port.Line, "state", StateAbsent, fmt.Sprintf("interface %s is a port of %s and cannot be absent", name,
					ctrl.Name))
			}
			port.Controller = ctrl.Name
		}
	}
	return nil
}

func (d *Document) checkInterface(iface *Interface) error {
	if iface.State == StateAbsent {
		return nil
	}
	if iface.Controller != "" {
		for _, ip := range []*IP{iface.IPv4, iface.IPv6} {
			if ip != nil && ip.Enabled {
				return d.fail(ip.Line, iface.Name+" ip", "",
					fmt.Sprintf("interface %s is a port of %s: a port has no IP settings of its own; give them to %s", iface.Name,
						iface.Controller, iface.Controller))
			}
		}
	}
	if iface.IPv6 != nil && iface.IPv6.Enabled && iface.IPv6.Autoconf && !iface.IPv6.DHCP {
		return d.fail(iface.IPv6.Line, iface.Name+" ipv6", "",
			"autoconf without dhcp is not supported (nmstate refuses it too); set dhcp: true as well")
	}
	if v := iface.VLAN; v != nil {
		if v.Base == iface.Name {
			return d.fail(iface.Line, iface.Name+" vlan.base-iface", v.Base, "a VLAN cannot be its own base")
		}
		if base := d.Find(v.Base); base != nil && base.State == StateAbsent {
			return d.fail(iface.Line, iface.Name+" vlan.base-iface", v.Base, fmt.Sprintf("the base interface %s is absent", v.Base))
		}
	}
	return nil
}

// placeRoutes gives each route without next-hop-interface the interface whose static
// addresses hold its next hop, as nmstate does, and checks that each route's interface
// can carry it.
func (d *Document) placeRoutes() error {
	for i := range d.Routes {
		r := &d.Routes[i]
		r.Destination = r.Destination.Masked()
		v6 := r.Destination.Addr().Is6()
		if r.Interface == "" {
			r.Interface = d.interfaceFor(r)
			if r.Interface == "" {
				return d.fail(r.Line, fmt.Sprintf("routes.config[%d]", i), r.Destination.String(),
					"no interface of the document has an address whose network holds the next hop; give next-hop-interface")
			}
		}
		iface := d.Find(r.Interface)
		if iface == nil || iface.State == StateAbsent {
			return d.fail(r.Line, fmt.Sprintf("routes.config[%d].next-hop-interface", i), r.Interface,
				"names no interface of the document: describe it under interfaces")
		}
		if ip := iface.ip(v6); ip == nil || !ip.Enabled || iface.Controller != "" {
			return d.fail(r.Line, fmt.Sprintf("routes.config[%d].next-hop-interface", i), r.Interface,
				fmt.Sprintf("interface %s has no %s enabled to carry this route", r.Interface, family(v6)))
		}
	}
	return nil
}

func (d *Document) interfaceFor(r *Route) string {
	if !r.NextHop.IsValid() {
		return ""
	}
	for _, iface := range d.Interfaces {
		if ip := iface.ip(r.NextHop.Is6()); ip != nil && ip.Enabled && iface.State != StateAbsent {
			for _, a := range ip.Addresses {
				if a.Masked().Contains(r.NextHop) {
					return iface.Name
				}
			}
		}
	}
	return ""
}

func (i *Interface) ip(v6 bool) *IP {
	if v6 {
		return i.IPv6
	}
	return i.IPv4
}

func family(v6 bool) string {
	if v6 {
		return "ipv6"
	}
	return "ipv4"
}
