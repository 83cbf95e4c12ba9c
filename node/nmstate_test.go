package node

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
)

// A node directory may hold its network as nmstate.yaml or agent-config.yaml: the keyfiles
// are in the payload, copied to the installed node, and the agent host's deviceName is the
// disk when sno.yaml gives none.
func TestNodeDirectoryNMState(t *testing.T) {
	dir := writeNodeDir(t, "")
	os.WriteFile(filepath.Join(dir, DirNMState), []byte("interfaces:\n- {name: eth0, type: ethernet, ipv4: {enabled: true, dhcp: true}}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, DirAgentConfig), []byte(`kind: AgentConfig
hosts:
- hostname: sno
  rootDeviceHints: {deviceName: `+testDisk+`}
  interfaces: [{name: eno2, macAddress: "52:54:00:00:00:02"}]
  networkConfig:
    interfaces:
    - {name: eno2, type: ethernet, ipv4: {enabled: true, address: [{ip: 192.0.2.5, prefix-length: 24}]}}
`), 0o600)
	n, files, err := Load(DirInputs(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{DirNMState, DirAgentConfig} {
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
}
