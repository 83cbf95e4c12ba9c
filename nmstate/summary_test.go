package nmstate

import (
	"slices"
	"testing"
)

// Summarize reads hand-written keyfiles too: the old address1=IP/PREFIX,GATEWAY form, a
// gateway key, and 802-3-ethernet, the long name of [ethernet].
func TestSummarizeHandWritten(t *testing.T) {
	p := Summarize("eno1.nmconnection", []byte(`[connection]
id=static eno1
type=802-3-ethernet
master=bond0

[802-3-ethernet]
mac-address=52:54:00:00:00:01

[ipv4]
method=manual
address1=192.0.2.10/24,192.0.2.1
dns=192.0.2.53;192.0.2.54;

[ipv6]
method=manual
addresses1=2001:db8::10/64
gateway=2001:db8::1
route1=::/0,2001:db8::fe,100
route2=2001:db8:5::/48,2001:db8::2
`))
	if p.ID != "static eno1" || p.Type != "802-3-ethernet" || p.MAC != "52:54:00:00:00:01" || p.Controller != "bond0" || p.Interface != "" {
		t.Errorf("profile %+v", p)
	}
	if p.IPv4 == nil || p.IPv4.Method != "manual" || !slices.Equal(p.IPv4.Addresses, []string{"192.0.2.10/24"}) ||
		!slices.Equal(p.IPv4.Gateways, []string{"192.0.2.1"}) || !slices.Equal(p.IPv4.DNS, []string{"192.0.2.53", "192.0.2.54"}) {
		t.Errorf("ipv4 %+v", p.IPv4)
	}
	if p.IPv6 == nil || !slices.Equal(p.IPv6.Addresses, []string{"2001:db8::10/64"}) || !slices.Equal(p.IPv6.Gateways,
		[]string{"2001:db8::1", "2001:db8::fe"}) {
		t.Errorf("ipv6 %+v", p.IPv6)
	}
}

// Summarize reports what Keyfiles rendered.
func TestSummarizeRendered(t *testing.T) {
	d, err := Parse("net.yaml", []byte(`interfaces:
- {name: eth0, type: ethernet, ipv4: {enabled: true, address: [{ip: 192.0.2.10, prefix-length: 24}]}}
routes: {config: [{destination: 0.0.0.0/0, next-hop-address: 192.0.2.1, next-hop-interface: eth0, metric: 5}]}
dns-resolver: {config: {server: [192.0.2.53]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	kf := d.Keyfiles()[0]
	p := Summarize(kf.Name, kf.Data)
	if p.Interface != "eth0" || p.Type != "ethernet" || p.IPv4 == nil || !slices.Equal(p.IPv4.Gateways, []string{"192.0.2.1"}) ||
		!slices.Equal(p.IPv4.DNS, []string{"192.0.2.53"}) || p.IPv6 == nil || p.IPv6.Method != "disabled" {
		t.Errorf("summary %+v %+v", p, p.IPv4)
	}
}
