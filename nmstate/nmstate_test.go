package nmstate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// coreos-installer's own NMState inputs give the connections its test expects (its
// fixtures keep only the settings that test checks).
func TestCoreOSInstallerFixtures(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "customize")
	for _, doc := range []string{"installer-test-nmstate-json.json", "installer-test-nmstate-yaml.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, doc))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(doc, data)
		if err != nil {
			t.Fatal(err)
		}
		kfs := d.Keyfiles()
		if len(kfs) != 2 {
			t.Fatalf("%s: %d keyfiles, want 2", doc, len(kfs))
		}
		for _, kf := range kfs {
			wantData, err := os.ReadFile(filepath.Join(dir, kf.Name))
			if err != nil {
				t.Fatalf("%s: no expected connection for %s: %v", doc, kf.Name, err)
			}
			got, want := readProfile(t, kf.Data), readProfile(t, wantData)
			for section, keys := range want {
				for k, v := range keys {
					// nmstate-js-eth1's expected id reads nmstate-json-eth1, a name no
					// input document has; the file name and interface say nmstate-js-eth1.
					if k == "id" && kf.Name == "nmstate-js-eth1.nmconnection" {
						v = "nmstate-js-eth1"
					}
					if got.get(section, k) != v {
						t.Errorf("%s: [%s] %s=%q, want %q", kf.Name, section, k, got.get(section, k), v)
					}
				}
			}
		}
	}
}

func TestRenderBondVLANBridge(t *testing.T) {
	got := render(t, `
interfaces:
- name: bond0
  type: bond
  mtu: 9000
  link-aggregation:
    mode: 802.3ad
    options: {miimon: 100, lacp_rate: fast, xmit_hash_policy: layer3+4}
    port: [eno1, eno2]
  ipv4:
    enabled: true
    address: [{ip: 192.0.2.10, prefix-length: 24}]
- name: bond0.42
  type: vlan
  vlan: {base-iface: bond0, id: 42}
  ipv6:
    enabled: true
    address: [{ip: "2001:db8::5", prefix-length: 64}]
- name: br0
  type: linux-bridge
  bridge:
    options: {stp: {enabled: false}}
    port: [{name: eno3}]
  ipv4: {enabled: true, dhcp: true, auto-dns: false, auto-gateway: false, auto-routes: false}
- name: eno2
  type: ethernet
  identifier: mac-address
  mac-address: "52:54:00:0a:0b:0c"
- name: eno4
  type: ethernet
  state: down
- name: eno5
  state: absent
dns-resolver:
  config: {server: [192.0.2.1, "2001:db8::1"], search: [example.com, lab.example.com]}
routes:
  config:
  - {destination: 0.0.0.0/0, next-hop-address: 192.0.2.1, metric: 50}
  - {destination: 198.51.100.0/24, next-hop-address: 192.0.2.254, table-id: 100}
  - {destination: "::/0", next-hop-address: "2001:db8::1", next-hop-interface: bond0.42}
route-rules:
  config:
  - {ip-from: 192.0.2.0/24, priority: 1000, route-table: 100}
`)
	want := map[string]map[string]string{
		"bond0.nmconnection": {"connection.type": "bond", "connection.interface-name": "bond0", "ethernet.mtu": "9000",
			"bond.mode": "802.3ad", "bond.miimon": "100", "bond.lacp_rate": "fast", "bond.xmit_hash_policy": "layer3+4",
			"ipv4.method": "manual", "ipv4.address1": "192.0.2.10/24", "ipv4.route1": "0.0.0.0/0,192.0.2.1,50",
			"ipv4.route2": "198.51.100.0/24,192.0.2.254", "ipv4.route2_options": "table=100",
			"ipv4.routing-rule1": "priority 1000 from 192.0.2.0/24 table 100",
			"ipv4.dns":           "192.0.2.1;", "ipv4.dns-search": "example.com;lab.example.com;", "ipv6.method": "disabled"},
		"bond0.42.nmconnection": {"connection.type": "vlan", "vlan.parent": "bond0", "vlan.id": "42", "ipv4.method": "disabled",
			"ipv6.method": "manual", "ipv6.address1": "2001:db8::5/64", "ipv6.route1": "::/0,2001:db8::1", "ipv6.dns": "2001:db8::1;"},
		"br0.nmconnection": {"connection.type": "bridge", "bridge.stp": "false", "ipv4.method": "auto",
			"ipv4.ignore-auto-dns": "true", "ipv4.never-default": "true", "ipv4.ignore-auto-routes": "true"},
		"eno1.nmconnection": {"connection.type": "ethernet", "connection.master": "bond0", "connection.slave-type": "bond",
			"ipv4.method": ""},
		"eno2.nmconnection": {"connection.master": "bond0", "connection.interface-name": "", "ethernet.mac-address": "52:54:00:0A:0B:0C"},
		"eno3.nmconnection": {"connection.master": "br0", "connection.slave-type": "bridge"},
		"eno4.nmconnection": {"connection.autoconnect": "false"},
	}
	var names []string
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "bond0.42.nmconnection bond0.nmconnection br0.nmconnection eno1.nmconnection eno2.nmconnection eno3.nmconnection eno4.nmconnection" {
		t.Fatalf("keyfiles %v", names)
	}
	for file, settings := range want {
		for key, v := range settings {
			section, k, _ := strings.Cut(key, ".")
			if g := got[file].get(section, k); g != v {
				t.Errorf("%s: [%s] %s=%q, want %q", file, section, k, g, v)
			}
		}
	}
}

// The UUID is nmstatectl gc's: version 5 in the URL namespace of TYPE://NAME, so the same
// document gives the same profiles.
func TestProfileUUID(t *testing.T) {
	if got := profileUUID("ethernet", "nmstate-js-eth1"); got != "b817152a-00a9-5150-b2d0-3b66136a6d2c" {
		t.Errorf("uuid %s", got)
	}
}

func TestBadDocuments(t *testing.T) {
	iface := "interfaces:\n- name: eth0\n  type: ethernet\n"
	for _, c := range []struct {
		name, doc, want string
		line            int
		unsupported     string
	}{
		{"unknown key", iface + "  ipv4: {enabeld: true}\n", `interfaces[0].ipv4.enabeld: unknown key; did you mean "enabled"?`, 4, ""},
		{"unknown top key", "interface: []\n", `did you mean "interfaces"?`, 1, ""},
		{"bad address", iface + "  ipv4: {enabled: true, address: [{ip: 192.0.2.300, prefix-length: 24}]}\n",
			`"192.0.2.300": is not an IP address`, 4, ""},
		{"family", iface + "  ipv4: {enabled: true, address: [{ip: '2001:db8::1', prefix-length: 24}]}\n", "is not an IPv4 address", 4, ""},
		{"prefix", iface + "  ipv6:\n    enabled: true\n    address:\n    - ip: 2001:db8::1\n      prefix-length: 129\n",
			`prefix-length "129": must be a whole number from 0 to 128`, 8, ""},
		{"duplicate", iface + "- name: eth0\n  type: ethernet\n", `"eth0": interface eth0 is described twice (first on line 2)`, 4, ""},
		{"vlan without base", "interfaces:\n- name: v1\n  type: vlan\n  vlan: {id: 5}\n", "a VLAN needs its base-iface", 4, ""},
		{"port in two bonds", "interfaces:\n- {name: b0, type: bond, link-aggregation: {mode: balance-rr, port: [eth1]}}\n- {name: b1, type: bond, link-aggregation: {mode: balance-rr, port: [eth1]}}\n",
			"interface eth1 is already a port of b0", 3, ""},
		{"ovs", "interfaces:\n- name: br-ex\n  type: ovs-bridge\n", "interface br-ex: type ovs-bridge is not supported", 3, "ovs-bridge"},
		{"wireguard", "interfaces:\n- name: wg0\n  type: wireguard\n", "type wireguard is not supported", 3, "wireguard"},
		{"ethtool", iface + "  ethtool: {feature: {rx-checksum: false}}\n",
			"interfaces[0].ethtool: interface eth0: is an nmstate setting sno-iso does not convert", 4, "ethtool"},
		{"dhcp client id", iface + "  ipv4: {enabled: true, dhcp: true, dhcp-client-id: ll}\n",
			"ipv4.dhcp-client-id: interface eth0: is an nmstate setting", 4, "dhcp-client-id"},
		{"alias", "interfaces:\n- &a {name: eth0, type: ethernet}\n- *a\n", "YAML aliases are not supported", 3, ""},
		{"bond mode", "interfaces:\n- {name: b0, type: bond, link-aggregation: {mode: lacp}}\n", `mode "lacp": is not a bond mode`, 2, ""},
		{"mtu", iface + "  mtu: 10\n", `mtu "10": must be a whole number from 68 to 65535`, 4, ""},
		{"mac", iface + "  mac-address: 52:54:00\n", "is not a MAC address", 4, ""},
		{"route interface", iface + "routes:\n  config:\n  - {destination: 0.0.0.0/0, next-hop-address: 192.0.2.1}\n",
			"give next-hop-interface", 6, ""},
		{"dns server", iface + "  ipv4: {enabled: true, dhcp: true}\ndns-resolver: {config: {server: [1.2.3]}}\n",
			`"1.2.3": is not an IP address`, 5, ""},
		{"port with ip", "interfaces:\n- {name: b0, type: bond, link-aggregation: {mode: balance-rr, port: [eth1]}}\n- {name: eth1, type: ethernet, ipv4: {enabled: true, dhcp: true}}\n",
			"a port has no IP settings", 3, ""},
		{"two documents", iface + "---\n" + iface, "more than one YAML document", 4, ""},
		{"empty", "", "the document is empty", 0, ""},
		{"not a mapping", "- eth0\n", "must be an NMState document", 1, ""},
		{"long name", "interfaces:\n- {name: abcdefghijklmnop, type: ethernet}\n", "longer than the 15 characters", 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("net.yaml", []byte(c.doc))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "net.yaml") {
				t.Errorf("error %q, want it to name net.yaml and say %q", err, c.want)
			}
			if e.Line != c.line {
				t.Errorf("line %d, want %d (%v)", e.Line, c.line, err)
			}
			if e.Unsupported != c.unsupported {
				t.Errorf("Unsupported %q, want %q", e.Unsupported, c.unsupported)
			}
		})
	}
}

// A YAML bomb (a billion laughs) is refused without expanding it, and a document over the
// bound is refused before it is parsed.
func TestBombsAndSize(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ninterfaces: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	// The keys are wrong too, so that the walk stops at the first; a bomb behind right keys
	// stops at its first alias (TestBadDocuments/alias). Either way nothing is expanded.
	if _, err := Parse("bomb.yaml", []byte(bomb)); err == nil || !strings.Contains(err.Error(), "bomb.yaml:1: a: unknown key") {
		t.Errorf("bomb: %v", err)
	}
	if _, err := Parse("bomb.yaml", []byte("interfaces: [*d]\n")); err == nil {
		t.Error("an undefined alias parsed")
	}
	big := make([]byte, MaxDocumentSize+1)
	if _, err := Parse("big.yaml", big); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB it may be") {
		t.Errorf("big: %v", err)
	}
}
