package nmstate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestNetworkManagerJudge hands the keyfiles of each document to NetworkManager and checks
// its reading of every profile against the document, and, for what this kernel can build
// (ethernet on veth, bridges), the addresses, routes, rules, MTUs and bridge ports it set.
// Bonds and VLANs (no bonding or 8021q module here) are judged by NetworkManager's reading.
func TestNetworkManagerJudge(t *testing.T) {
	testenv.Long(t, "NetworkManager judges each document in about 5 s")
	docs := map[string][]byte{}
	paths, _ := filepath.Glob("testdata/judge/*.yaml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(p)] = data
	}
	for _, name := range []string{"installer-test-nmstate-json.json", "installer-test-nmstate-yaml.yaml"} {
		docs[name] = fixtures.Bytes(t, filepath.Join("customize", name))
	}
	if len(docs) < 7 {
		t.Fatalf("only %d documents", len(docs))
	}
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			doc, err := Parse(name, data)
			if IsAgentConfig(data) {
				var host *AgentHost
				if host, err = ParseAgentConfig(name, data, ""); err == nil {
					doc = host.Network
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			keyfiles := doc.Keyfiles()
			// A NIC that a profile matches by MAC gets another kernel name: the profile must
			// find it by its MAC alone.
			var nics []nic
			kernelNames := map[string]string{}
			for i, iface := range doc.Interfaces {
				if iface.Type != TypeEthernet || iface.State == StateAbsent {
					continue
				}
				n := nic{name: iface.Name}
				if iface.MatchMAC {
					n = nic{name: fmt.Sprintf("macnic%d", i), mac: iface.MAC}
				}
				nics = append(nics, n)
				kernelNames[iface.Name] = n.name
			}
			j := startJudge(t, nics, keyfiles)
			j.kernelNames = kernelNames
			for _, iface := range doc.Interfaces {
				if iface.State == StateAbsent {
					if _, err := j.nmcli("-g", "connection.id", "connection", "show", iface.Name); err == nil {
						t.Errorf("%s is absent but NetworkManager has a profile for it", iface.Name)
					}
					continue
				}
				j.checkProfile(doc, iface)
			}
			j.checkKernel(doc)
		})
	}
}

// checkProfile compares NetworkManager's reading of an interface's profile with the document.
func (j *judge) checkProfile(doc *Document, iface *Interface) {
	t := j.t
	t.Helper()
	want := map[string]string{
		"connection.type": map[string]string{TypeEthernet: "802-3-ethernet", TypeBond: "bond", TypeVLAN: "vlan",
			TypeBridge: "bridge"}[iface.Type],
		"connection.interface-name": iface.Name,
		"connection.autoconnect":    yesNo(iface.State == StateUp),
		"connection.master":         iface.Controller,
	}
	if iface.Type == TypeEthernet || iface.MTU > 0 || iface.MAC != "" {
		want["802-3-ethernet.mtu"] = "auto"
		want["802-3-ethernet.mac-address"] = ""
		want["802-3-ethernet.cloned-mac-address"] = ""
	}
	if iface.MatchMAC {
		want["connection.interface-name"] = ""
		want["802-3-ethernet.mac-address"] = iface.MAC
	} else if iface.MAC != "" {
		want["802-3-ethernet.cloned-mac-address"] = iface.MAC
	}
	if iface.MTU > 0 {
		want["802-3-ethernet.mtu"] = strconv.Itoa(iface.MTU)
	}
	if iface.Controller != "" {
		want["connection.slave-type"] = map[string]string{TypeBond: "bond", TypeBridge: "bridge"}[doc.Find(iface.Controller).Type]
	} else {
		for _, v6 := range []bool{false, true} {
			f := family(v6)
			ip := iface.ip(v6)
			want[f+".method"] = wantMethod(doc, iface, v6)
			var addrs, servers, routes []string
			if ip != nil && ip.Enabled {
				for _, a := range ip.Addresses {
					addrs = append(addrs, a.String())
				}
				for _, flag := range []struct {
					field string
					v     *bool
				}{{"ignore-auto-dns", ip.AutoDNS}, {"never-default", ip.AutoGateway}, {"ignore-auto-routes", ip.AutoRoutes}} {
					want[f+"."+flag.field] = yesNo(flag.v != nil && !*flag.v)
				}
			}
			for _, r := range doc.Routes {
				if r.Interface == iface.Name && r.Destination.Addr().Is6() == v6 {
					routes = append(routes, nmcliRoute(r))
				}
			}
			want[f+".addresses"] = strings.Join(addrs, ", ")
			want[f+".routes"] = strings.Join(routes, ", ")
			for _, a := range doc.DNS.Servers {
				if a.Is6() == v6 {
					servers = append(servers, a.String())
				}
			}
			if len(servers) > 0 && firstDNSCarrier(doc, v6) == iface.Name {
				want[f+".dns"] = strings.Join(servers, ",")
			} else {
				want[f+".dns"] = ""
			}
		}
	}
	switch {
	case iface.Bond != nil:
		opts := []string{"mode=" + iface.Bond.Mode}
		for _, o := range iface.Bond.Options {
			opts = append(opts, o.Name+"="+o.Value)
		}
		want["bond.options"] = strings.Join(opts, ",")
	case iface.VLAN != nil:
		want["vlan.id"] = strconv.Itoa(iface.VLAN.ID)
		want["vlan.parent"] = iface.VLAN.Base
	case iface.Bridge != nil:
		for _, o := range iface.Bridge.Options {
			if o.Name == "stp" {
				want["bridge.stp"] = yesNo(o.Value == "true")
			}
		}
	}
	var fields []string
	for f := range want {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	got := j.settings(iface.Name, fields...)
	for _, f := range fields {
		if f == "bond.options" {
			// NetworkManager lists the options sorted, mode first.
			if sortedOptions(got[f]) != sortedOptions(want[f]) {
				t.Errorf("%s: %s = %q, want %q", iface.Name, f, got[f], want[f])
			}
			continue
		}
		if got[f] != want[f] {
			t.Errorf("%s: %s = %q, want %q", iface.Name, f, got[f], want[f])
		}
	}
}

func sortedOptions(s string) string {
	parts := strings.Split(s, ",")
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// wantMethod is nmstate's choice of method, from the document.
func wantMethod(doc *Document, iface *Interface, v6 bool) string {
	ip := iface.ip(v6)
	if ip == nil || !ip.Enabled {
		return "disabled"
	}
	hasRoutes := slices.ContainsFunc(doc.Routes,
		func(r Route) bool { return r.Interface == iface.Name && r.Destination.Addr().Is6() == v6 })
	switch {
	case v6 && ip.DHCP && ip.Autoconf:
		return "auto"
	case v6 && ip.DHCP:
		return "dhcp"
	case ip.DHCP:
		return "auto"
	case len(ip.Addresses) > 0 || hasRoutes:
		return "manual"
	case v6:
		return "link-local"
	}
	return "disabled"
}

func firstDNSCarrier(doc *Document, v6 bool) string {
	for _, r := range doc.Routes {
		if r.Destination.Bits() == 0 && r.Destination.Addr().Is6() == v6 {
			return r.Interface
		}
	}
	for _, iface := range doc.Interfaces {
		if ip := iface.ip(v6); ip != nil && ip.Enabled && iface.State != StateAbsent {
			return iface.Name
		}
	}
	return ""
}

// nmcliRoute is a route as nmcli shows it.
func nmcliRoute(r Route) string {
	s := r.Destination.String()
	if r.NextHop.IsValid() {
		s += " " + r.NextHop.String()
	}
	if r.Metric >= 0 {
		s += " " + strconv.Itoa(r.Metric)
	}
	if r.Table != 0 {
		s += fmt.Sprintf(" table=%d", r.Table)
	}
	return s
}

// activatable reports whether this kernel can bring the interface up: an ethernet veth, or
// a bridge of such.
func activatable(doc *Document, iface *Interface) bool {
	if iface.State != StateUp {
		return false
	}
	switch iface.Type {
	case TypeEthernet:
		return iface.Controller == "" || doc.Find(iface.Controller).Type == TypeBridge
	case TypeBridge:
		return true
	}
	return false
}

type ipAddr struct {
	IfName   string `json:"ifname"`
	MTU      int    `json:"mtu"`
	Master   string `json:"master"`
	Address  string `json:"address"`
	AddrInfo []struct {
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
	} `json:"addr_info"`
}

// checkKernel waits for the static addresses of every activatable interface, then compares
// the kernel's links, addresses, routes and rules with the document.
func (j *judge) checkKernel(doc *Document) {
	t := j.t
	t.Helper()
	links := func() map[string]ipAddr {
		var list []ipAddr
		if err := json.Unmarshal([]byte(j.run("ip", "-n", j.ns, "-j", "addr", "show")), &list); err != nil {
			t.Fatal(err)
		}
		m := map[string]ipAddr{}
		for _, l := range list {
			m[l.IfName] = l
		}
		return m
	}
	globals := func(l ipAddr) []string {
		var out []string
		for _, a := range l.AddrInfo {
			if a.Scope == "global" {
				out = append(out, fmt.Sprintf("%s/%d", a.Local, a.PrefixLen))
			}
		}
		slices.Sort(out)
		return out
	}
	want := map[string][]string{}
	for _, iface := range doc.Interfaces {
		if !activatable(doc, iface) || iface.Controller != "" {
			continue
		}
		var addrs []string
		for _, ip := range []*IP{iface.IPv4, iface.IPv6} {
			if ip != nil && ip.Enabled {
				for _, a := range ip.Addresses {
					addrs = append(addrs, a.String())
				}
			}
		}
		slices.Sort(addrs)
		want[j.kernelName(iface.Name)] = addrs
	}
	j.await("the static addresses", func() (bool, string) {
		l := links()
		for name, addrs := range want {
			if got := globals(l[name]); !slices.Equal(got, addrs) {
				return false, fmt.Sprintf("%s has %v, want %v", name, got, addrs)
			}
		}
		return true, ""
	})
	l := links()
	for _, iface := range doc.Interfaces {
		if iface.State == StateAbsent {
			continue
		}
		got, ok := l[j.kernelName(iface.Name)]
		if !activatable(doc, iface) {
			// A profile that is down, or that this kernel cannot build, leaves its
			// interface without addresses.
			if ok && len(globals(got)) > 0 {
				t.Errorf("%s: addresses %v, want none", iface.Name, globals(got))
			}
			continue
		}
		if iface.MTU > 0 && got.MTU != iface.MTU {
			t.Errorf("%s: MTU %d, want %d", iface.Name, got.MTU, iface.MTU)
		}
		if iface.MAC != "" && !strings.EqualFold(got.Address, iface.MAC) {
			t.Errorf("%s: MAC %s, want %s", iface.Name, got.Address, iface.MAC)
		}
		if iface.Controller != "" && got.Master != iface.Controller {
			t.Errorf("%s: master %q, want %q", iface.Name, got.Master, iface.Controller)
		}
	}
	j.checkRoutes(doc)
	j.checkRules(doc)
}

func (j *judge) checkRoutes(doc *Document) {
	type route struct {
		Dst     string `json:"dst"`
		Gateway string `json:"gateway"`
		Dev     string `json:"dev"`
		Metric  int    `json:"metric"`
	}
	for _, r := range doc.Routes {
		iface := doc.Find(r.Interface)
		if !activatable(doc, iface) {
			continue
		}
		table := r.Table
		if table == 0 {
			table = 254
		}
		fam := "-4"
		if r.Destination.Addr().Is6() {
			fam = "-6"
		}
		var routes []route
		if err := json.Unmarshal([]byte(j.run("ip", "-n", j.ns, "-j", fam, "route", "show", "table", strconv.Itoa(table))),
			&routes); err != nil {
			j.t.Fatal(err)
		}
		dst := r.Destination.String()
		if r.Destination.Bits() == 0 {
			dst = "default"
		}
		found := slices.ContainsFunc(routes, func(k route) bool {
			return k.Dst == dst && k.Dev == j.kernelName(r.Interface) && (!r.NextHop.IsValid() || k.Gateway == r.NextHop.String()) &&
				(r.Metric < 0 || k.Metric == r.Metric)
		})
		if !found {
			j.t.Errorf("route %s via %s dev %s metric %d table %d not in the kernel's table: %+v", dst, r.NextHop, r.Interface, r.Metric,
				table, routes)
		}
	}
}

func (j *judge) checkRules(doc *Document) {
	type rule struct {
		Priority int    `json:"priority"`
		Src      string `json:"src"`
		SrcLen   int    `json:"srclen"`
		Dst      string `json:"dst"`
		DstLen   int    `json:"dstlen"`
		Table    string `json:"table"`
	}
	for _, r := range doc.Rules {
		fam := "-4"
		if r.IPv6() {
			fam = "-6"
		}
		var rules []rule
		if err := json.Unmarshal([]byte(j.run("ip", "-n", j.ns, "-j", fam, "rule", "show")), &rules); err != nil {
			j.t.Fatal(err)
		}
		found := slices.ContainsFunc(rules, func(k rule) bool {
			return k.Priority == r.Priority && k.Table == strconv.Itoa(r.Table) &&
				(!r.From.IsValid() || fmt.Sprintf("%s/%d", k.Src, k.SrcLen) == r.From.String()) &&
				(!r.To.IsValid() || fmt.Sprintf("%s/%d", k.Dst, k.DstLen) == r.To.String())
		})
		if !found {
			j.t.Errorf("rule priority %d from %v to %v table %d not in the kernel: %+v", r.Priority, r.From, r.To, r.Table, rules)
		}
	}
}

// kernelName is the name of the device an interface of the document is on.
func (j *judge) kernelName(name string) string {
	if k, ok := j.kernelNames[name]; ok {
		return k
	}
	return name
}
