package nmstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks, for any bytes: Parse fails with an *Error naming the file, or the
// document renders one keyfile per interface that is not absent, each a profile whose id
// is its file's name and whose interface's static addresses it carries; rendering again
// gives the same bytes.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("testdata/judge/*.yaml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"interfaces":[{"name":"eth1","type":"ethernet","ipv4":{"enabled":"true","dhcp":"true"}}]}`))
	f.Add([]byte("interfaces:\n- &a {name: eth0, type: ethernet}\n- *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "fuzz.yaml" || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %v is not an *Error naming the file", err)
			}
			return
		}
		kfs := doc.Keyfiles()
		again := doc.Keyfiles()
		present := 0
		for _, iface := range doc.Interfaces {
			if iface.State != StateAbsent {
				present++
			}
		}
		if len(kfs) != present {
			t.Fatalf("%d keyfiles for %d interfaces", len(kfs), present)
		}
		for i, kf := range kfs {
			if string(kf.Data) != string(again[i].Data) {
				t.Fatalf("%s rendered twice differs", kf.Name)
			}
			p := readProfile(t, kf.Data)
			name := strings.TrimSuffix(kf.Name, ".nmconnection")
			if p.get("connection", "id") != name || strings.Contains(kf.Name, "/") {
				t.Fatalf("%s has id %q", kf.Name, p.get("connection", "id"))
			}
			iface := doc.Find(name)
			for _, v6 := range []bool{false, true} {
				ip := iface.ip(v6)
				if ip == nil || !ip.Enabled || iface.Controller != "" {
					continue
				}
				for n, a := range ip.Addresses {
					if got := p.get(family(v6), fmt.Sprintf("address%d", n+1)); got != a.String() {
						t.Fatalf("%s: address%d=%q, want %s", kf.Name, n+1, got, a)
					}
				}
			}
		}
	})
}

// BenchmarkConvert100 parses and renders a document of 100 interfaces: 50 NICs with static
// addresses, 25 bonds of two ports each... in all 100 described interfaces and their routes.
func BenchmarkConvert100(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("interfaces:\n")
	for i := range 50 {
		fmt.Fprintf(&sb, "- name: eth%d\n  type: ethernet\n  mtu: 9000\n  ipv4:\n    enabled: true\n    address:\n    - ip: 10.%d.0.2\n      prefix-length: 24\n", i, i)
	}
	for i := range 25 {
		fmt.Fprintf(&sb, "- name: bond%d\n  type: bond\n  link-aggregation:\n    mode: 802.3ad\n    options: {miimon: 100, lacp_rate: fast}\n    port: [p%da, p%db]\n", i, i, i)
		fmt.Fprintf(&sb, "- name: vlan%d\n  type: vlan\n  vlan: {base-iface: bond%d, id: %d}\n  ipv6:\n    enabled: true\n    address:\n    - ip: 2001:db8:%d::2\n      prefix-length: 64\n", i, i, i+10, i)
	}
	sb.WriteString("routes:\n  config:\n")
	for i := range 50 {
		fmt.Fprintf(&sb, "  - {destination: 172.16.%d.0/24, next-hop-address: 10.%d.0.1}\n", i, i)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		doc, err := Parse("bench.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(doc.Keyfiles()); n != 150 {
			b.Fatalf("%d keyfiles", n)
		}
	}
}
