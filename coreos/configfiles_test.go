package coreos

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestConfigFiles: Files names every file sno.yaml names with its key, and also a path the
// parser resolved for a key Files does not list, so that no file escapes a rule about them.
func TestConfigFiles(t *testing.T) {
	cfg, err := ParseConfig(filepath.Join("/nodes", "sno", "sno.yaml"), []byte("coreOSInstallation:\n  installationDisk: /dev/vda\n"+
		"network:\n  keyfiles: [eth0.nmconnection, /etc/eth1.nmconnection]\n"+
		"customizations: [chrony.bu]\n"+
		"bmc:\n  address: https://192.0.2.1\n  credentialsFile: ../bmc.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ResolvePath("other.yaml") // as the parser does for any file it reads
	want := []NamedFile{
		{"network.keyfiles[0]", filepath.Join(cfg.Dir, "eth0.nmconnection")},
		{"network.keyfiles[1]", "/etc/eth1.nmconnection"},
		{"customizations[0]", filepath.Join(cfg.Dir, "chrony.bu")},
		{"bmc.credentialsFile", filepath.Join(filepath.Dir(cfg.Dir), "bmc.yaml")},
		{"", filepath.Join(cfg.Dir, "other.yaml")},
	}
	if got := cfg.Files(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Files:\n got %v\nwant %v", got, want)
	}
}
