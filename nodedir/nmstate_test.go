package nodedir

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/node"
)

const testDisk = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"

// A node directory may hold its network as nmstate.yaml or agent-config.yaml: the keyfiles
// are in the payload, copied to the installed node, the agent host's deviceName is the
// disk when sno.yaml gives none, and its hostname is the node's.
func TestNMStateInNodeDirectory(t *testing.T) {
	_, dir := nodesDir(t, "")
	write(t, filepath.Join(dir, ConfigFile), "coreOSInstallation: {}\n")
	write(t, filepath.Join(dir, NMStateFile), "interfaces:\n- {name: eth0, type: ethernet, ipv4: {enabled: true, dhcp: true}}\n")
	write(t, filepath.Join(dir, AgentConfigFile), `kind: AgentConfig
hosts:
- hostname: sno
  rootDeviceHints: {deviceName: `+testDisk+`}
  interfaces: [{name: eno2, macAddress: "52:54:00:00:00:02"}]
  networkConfig:
    interfaces:
    - {name: eno2, type: ethernet, ipv4: {enabled: true, address: [{ip: 192.0.2.5, prefix-length: 24}]}}
`)
	n, files, err := node.Load(Inputs(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{NMStateFile, AgentConfigFile} {
		if !slices.Contains(files, filepath.Join(dir, f)) {
			t.Errorf("files read %q lack %s", files, f)
		}
	}
	eth0 := string(n.Payload[initrd.NetworkDir+"/eth0.nmconnection"])
	eno2 := string(n.Payload[initrd.NetworkDir+"/eno2.nmconnection"])
	if !strings.Contains(eth0, "interface-name=eth0\n") || !strings.Contains(eno2, "mac-address=52:54:00:00:00:02\n") {
		t.Errorf("payload keyfiles:\n%s\n%s", eth0, eno2)
	}
	if n.Installation.Disk != testDisk || !n.Installation.CopyNetwork {
		t.Errorf("installation %+v: want the agent host's disk and copyNetwork implied by the keyfiles", n.Installation)
	}
	// The agent host's hostname is the node's, live and installed.
	info, err := coreos.InspectIgnition(n.Payload[initrd.IgnitionPath])
	if err != nil || info.Hostname != "sno" || info.InstalledHostname != "sno" {
		t.Errorf("the live config's hostname: %+v, %v", info, err)
	}
}

// sno.yaml's network.nmstate stays inside the node directory too.
func TestNMStateConfined(t *testing.T) {
	_, dir := nodesDir(t, "network:\n  nmstate: [../other/net.yaml]\n")
	_, _, err := node.Load(Inputs(dir))
	if err == nil || !strings.Contains(err.Error(), "network.nmstate[0] names") {
		t.Errorf("error %v, want network.nmstate[0] refused", err)
	}
}
