package coreos

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadConfigBMC(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeFile(t, filepath.Join(dir, "sno.yaml"), `coreOSInstallation:
  installationDisk: /dev/vda
bmc:
  address: idrac-virtualmedia://10.0.0.5/redfish/v1/Systems/System.Embedded.1
  credentialsFile: bmc-credentials.yaml
  systemID: System.Embedded.1
  insecure: true
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &BMC{Address: "idrac-virtualmedia://10.0.0.5/redfish/v1/Systems/System.Embedded.1",
		CredentialsFile: filepath.Join(dir, "bmc-credentials.yaml"), SystemID: "System.Embedded.1", Insecure: true}
	if !reflect.DeepEqual(cfg.BMC, want) {
		t.Errorf("got %+v, want %+v", cfg.BMC, want)
	}

	cfg, err = LoadConfig(writeFile(t, filepath.Join(dir, "none.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\n"))
	if err != nil || cfg.BMC != nil {
		t.Errorf("without bmc: %+v, %v", cfg.BMC, err)
	}

	cfg, err = LoadConfig(writeFile(t, filepath.Join(dir, "ca.yaml"),
		"coreOSInstallation:\n  installationDisk: /dev/vda\nbmc:\n  address: https://h\n  caFile: certs/bmc-ca.pem\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BMC == nil || cfg.BMC.CAFile != filepath.Join(dir, "certs", "bmc-ca.pem") {
		t.Errorf("caFile: %+v; want it resolved beside sno.yaml", cfg.BMC)
	}
}

func TestLoadConfigBMCErrors(t *testing.T) {
	for _, tt := range []struct{ bmc, want string }{
		{"bmc:\n  credentialsFile: c.yaml\n", "sno.yaml:4:3: bmc needs an address"},
		{"bmc:\n  address: 10.0.0.5\n", `bmc.address "10.0.0.5" has no scheme: write https://10.0.0.5`},
		{"bmc:\n  address: https://h\n  insecure: maybe\n", "bmc.insecure must be true or false"},
		{"bmc:\n  address: https://h\n  password: x\n", `unknown key "password" in bmc`},
		{"bmc:\n  address: https://h\n  credentialsFile: \"\"\n", "credentialsFile is empty"},
		{"bmc:\n  address: https://h\n  caFile: \"\"\n", "caFile is empty"},
		{"bmc:\n  address: https://h\n  caFile: ca.pem\n  insecure: true\n", "bmc.insecure skips the certificate check that bmc.caFile is for"},
		{"bmc: https://h\n", "bmc must be a mapping"},
	} {
		path := writeFile(t, filepath.Join(t.TempDir(), "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\n"+tt.bmc)
		_, err := LoadConfig(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want %q", tt.bmc, err, tt.want)
		}
	}
}
