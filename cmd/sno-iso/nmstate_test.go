package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

const nmstateDoc = `interfaces:
  - name: eno1
    type: ethernet
    ipv4:
      enabled: true
      address:
        - ip: 192.0.2.10
          prefix-length: 24
dns-resolver:
  config:
    server: [192.0.2.1]
routes:
  config:
    - destination: 0.0.0.0/0
      next-hop-address: 192.0.2.1
      next-hop-interface: eno1
`

// agentConfig has the OpenShift documentation's shape: two hosts, each with its NIC mapped
// to a MAC and a static address.
const agentConfig = `apiVersion: v1beta1
kind: AgentConfig
metadata:
  name: sno
rendezvousIP: 192.168.111.80
hosts:
  - hostname: master-0
    role: master
    rootDeviceHints:
      deviceName: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
    interfaces:
      - name: eno1
        macAddress: 00:ef:44:21:e6:a5
    networkConfig:
      interfaces:
        - name: eno1
          type: ethernet
          state: up
          mac-address: 00:ef:44:21:e6:a5
          ipv4:
            enabled: true
            address:
              - ip: 192.168.111.80
                prefix-length: 23
            dhcp: false
      dns-resolver:
        config:
          server: [192.168.111.1]
      routes:
        config:
          - destination: 0.0.0.0/0
            next-hop-address: 192.168.111.2
            next-hop-interface: eno1
            table-id: 254
  - hostname: master-1
    rootDeviceHints:
      serialNumber: S123
    networkConfig:
      interfaces:
        - {name: eno2, type: ethernet, ipv4: {enabled: true, dhcp: true}}
`

func TestNetworkGC(t *testing.T) {
	src := t.TempDir()
	doc := writeFile(t, filepath.Join(src, "net.yaml"), nmstateDoc)
	agent := writeFile(t, filepath.Join(src, "agent-config.yaml"), agentConfig)
	out := filepath.Join(t.TempDir(), "keys")

	printed := string(mustSno(t, nil, "network", "gc", doc, "-C", out))
	if printed != filepath.Join(out, "eno1.nmconnection")+"\n" {
		t.Errorf("printed %q", printed)
	}
	info, err := os.Stat(filepath.Join(out, "eno1.nmconnection"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("keyfile %v, %v: want mode 0600", info, err)
	}
	data, _ := os.ReadFile(filepath.Join(out, "eno1.nmconnection"))
	for _, want := range []string{"interface-name=eno1\n", "method=manual\n", "address1=192.0.2.10/24\n", "route1=0.0.0.0/0,192.0.2.1\n",
		"dns=192.0.2.1;\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("keyfile lacks %q:\n%s", want, data)
		}
	}
	wantFailure(t, sno(t, nil, "network", "gc", doc, "-C", out), "exists", "-f")
	wantUsageError(t, sno(t, nil, "network", "gc", "--host", "master-0", doc, "-C", t.TempDir()),
		"--host chooses a host of an agent-config.yaml, and no FILE is one")
	mustSno(t, nil, "network", "gc", "-f", doc, "-C", out)

	// agent-config: the chosen host's NIC is matched by its MAC, not by a name.
	agentOut := t.TempDir()
	wantFailure(t, sno(t, nil, "network", "gc", agent, "-C", agentOut), "2 hosts (master-0, master-1)")
	mustSno(t, nil, "network", "gc", agent, "--host", "master-0", "-C", agentOut)
	data, _ = os.ReadFile(filepath.Join(agentOut, "eno1.nmconnection"))
	if !strings.Contains(string(data), "mac-address=00:EF:44:21:E6:A5\n") || strings.Contains(string(data), "interface-name=") {
		t.Errorf("the agent-config host's keyfile does not match its NIC by MAC:\n%s", data)
	}
}

// Bad NMState input is a usage error (exit 2) naming the file, line and value, and nothing
// is written.
func TestNetworkGCBadInput(t *testing.T) {
	src := t.TempDir()
	good := writeFile(t, filepath.Join(src, "good.yaml"), nmstateDoc)
	huge := filepath.Join(src, "huge.yaml")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 17<<20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"unknown key", "interfaces:\n- name: eth0\n  type: ethernet\n  ipv4: {enabeld: true}\n",
			`bad.yaml:4: interfaces[0].ipv4.enabeld: unknown key; did you mean "enabled"?`},
		{"bad address", "interfaces:\n- name: eth0\n  type: ethernet\n  ipv4:\n    enabled: true\n    address: [{ip: 10.0.0.256, prefix-length: 8}]\n", `bad.yaml:6: interfaces[0].ipv4.address[0].ip "10.0.0.256": is not an IP address`},
		{"prefix", "interfaces:\n- name: eth0\n  type: ethernet\n  ipv4:\n    enabled: true\n    address: [{ip: 10.0.0.1, prefix-length: 33}]\n", `prefix-length "33": must be a whole number from 0 to 32`},
		{"ovs", "interfaces:\n- name: br-ex\n  type: ovs-bridge\n", "interface br-ex: type ovs-bridge is not supported"},
		{"over 16 MiB", "", "huge.yaml: larger than the 16 MiB"},
		{"an interface in two files", nmstateDoc, "multiple input keyfiles named"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := writeFile(t, filepath.Join(t.TempDir(), "bad.yaml"), c.doc)
			if c.doc == "" {
				bad = huge
			}
			out := filepath.Join(t.TempDir(), "keys")
			r := sno(t, nil, "network", "gc", good, bad, "-C", out)
			wantFailure(t, r, c.want)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// build takes NMState wherever it takes keyfiles: --network-nmstate, sno.yaml's
// networkConfig with interfaces, and an agent-config host, whose deviceName is the disk.
func TestBuildNMStateInputs(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	doc := writeFile(t, filepath.Join(dir, "net.yaml"), nmstateDoc)
	agent := writeFile(t, filepath.Join(dir, "agent-config.yaml"), agentConfig)
	indented := "  " + strings.ReplaceAll(strings.TrimSuffix(nmstateDoc, "\n"), "\n", "\n  ") + "\n"
	snoYAML := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\n"+
		"hostname: sno1.example.com\ninterfaces:\n  - {name: eno1, macAddress: '52:54:00:00:00:01'}\nnetworkConfig:\n"+indented)
	for _, c := range []struct {
		name     string
		args     []string
		want     []string
		disk     string
		hostname string
	}{
		{"--network-nmstate", []string{"--installation-disk", "/dev/vda", "--network-nmstate", doc}, []string{"interface-name=eno1\n",
			"address1=192.0.2.10/24\n"}, "/dev/vda", ""},
		{"sno.yaml networkConfig", []string{"--config", snoYAML}, []string{"mac-address=52:54:00:00:00:01\n", "address1=192.0.2.10/24\n"},
			"/dev/vda", "sno1.example.com"},
		{"agent-config", []string{"--agent-config", agent, "--host", "master-0"}, []string{"mac-address=00:EF:44:21:E6:A5\n",
			"route1_options=table=254\n"},
			"/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", "master-0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sno.iso")
			r := sno(t, nil, append([]string{"build", "--iso", iso, "--ignition", ign, "-o", out}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("build failed: %s", r.stderr)
			}
			if strings.Contains(string(r.stderr), "hostname") {
				t.Errorf("stderr warns about the hostname: %s", r.stderr)
			}
			got := string(mustSno(t, nil, "network", "extract", out))
			if !strings.HasPrefix(got, "########## eno1.nmconnection ##########\n[connection]\n") {
				t.Fatalf("embedded keyfiles:\n%s", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("embedded keyfile lacks %q:\n%s", w, got)
				}
			}
			info := inspectJSON(t, out)
			if info.Installation == nil || info.Installation.Disk != c.disk {
				t.Errorf("installation %+v, want disk %s", info.Installation, c.disk)
			}
			// inspect summarises the network carried, and says it reaches the installed system.
			if n := info.Network; n == nil || !n.CopiedToInstalledSystem || len(n.Profiles) != 1 || n.Profiles[0].IPv4 == nil ||
				len(n.Profiles[0].IPv4.Addresses) != 1 || len(n.Profiles[0].IPv4.Gateways) != 1 || len(n.Profiles[0].IPv4.DNS) != 1 {
				t.Errorf("inspect's network: %+v", info.Network)
			}
			text := string(mustSno(t, nil, "inspect", out))
			if !strings.Contains(text, "Network:       1 profile(s), copied to the installed system\n") || !strings.Contains(text,
				"ipv4 manual ") {
				t.Errorf("inspect's text lacks the network:\n%s", text)
			}
			// The hostname is applied to the live system and, by a MachineConfig, the installed one.
			switch h := info.Hostname; {
			case c.hostname == "" && h != nil:
				t.Errorf("inspect reports a hostname %+v", h)
			case c.hostname != "" && (h == nil || h.Live != c.hostname || h.Installed != c.hostname):
				t.Errorf("inspect's hostname %+v, want %s", h, c.hostname)
			case c.hostname != "" && !strings.Contains(text, "Hostname:      "+c.hostname+" (live and installed system)\n"):
				t.Errorf("inspect's text lacks the hostname:\n%s", text)
			}
		})
	}
	t.Run("hostname conflict", func(t *testing.T) {
		outDir := t.TempDir()
		r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "-o", filepath.Join(outDir, "x.iso"), "--config", snoYAML,
			"--agent-config", agent, "--host", "master-0")
		wantFailure(t, r, "sno.yaml says hostname sno1.example.com but", "agent-config.yaml says master-0")
		if ents := dirEntries(t, outDir); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
	t.Run("bad hostname", func(t *testing.T) {
		outDir := t.TempDir()
		bad := writeFile(t, filepath.Join(dir, "bad-name.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\nhostname: sno_1\n")
		r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "-o", filepath.Join(outDir, "x.iso"), "--config", bad)
		wantFailure(t, r, "bad-name.yaml:3:11: hostname: hostname \"sno_1\": '_' is not a letter")
		if r.code != 2 {
			t.Errorf("exit %d, want 2", r.code)
		}
		if ents := dirEntries(t, outDir); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
	t.Run("unsupported root device hints", func(t *testing.T) {
		outDir := t.TempDir()
		r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "-o", filepath.Join(outDir, "x.iso"), "--agent-config", agent,
			"--host", "master-1")
		wantFailure(t, r, "rootDeviceHints serialNumber are not supported")
		if ents := dirEntries(t, outDir); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
	t.Run("bad nmstate", func(t *testing.T) {
		outDir := t.TempDir()
		bad := writeFile(t, filepath.Join(dir, "bad.yaml"),
			"interfaces:\n- {name: b0, type: bond, link-aggregation: {mode: active-backup, port: [eth1]}}\n"+
				"- {name: b1, type: bond, link-aggregation: {mode: active-backup, port: [eth1]}}\n")
		r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/vda", "-o", filepath.Join(outDir,
			"x.iso"), "--network-nmstate", bad)
		wantFailure(t, r, "bad.yaml:3", "interface eth1 is already a port of b0")
		if r.code != 2 {
			t.Errorf("exit %d, want 2", r.code)
		}
		if ents := dirEntries(t, outDir); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
}

// pxe build takes the same NMState inputs as build: the keyfiles go into initrd.img.
func TestPXEBuildNMState(t *testing.T) {
	in := t.TempDir()
	ign := bipConfig(t, in, 0)
	agent := writeFile(t, filepath.Join(in, "agent-config.yaml"), agentConfig)
	dir := t.TempDir()
	mustSno(t, nil, "pxe", "build", "--iso", withInitramfs(t, stockLiveInitramfs(t)), "-o", dir, "--ignition", ign,
		"--agent-config", agent, "--host", "master-0")
	files := readPXEInitrd(t, dir)
	if got := string(files[initrd.NetworkDir+"/eno1.nmconnection"]); !strings.Contains(got, "mac-address=00:EF:44:21:E6:A5\n") {
		t.Errorf("initrd.img's eno1.nmconnection:\n%s", got)
	}
}
