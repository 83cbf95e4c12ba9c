package coreos

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	k8syaml "sigs.k8s.io/yaml"
)

func TestValidateHostname(t *testing.T) {
	for _, good := range []string{"sno1", "sno1.example.com", "0-a", strings.Repeat("a", 63),
		strings.Repeat("a", 31) + "." + strings.Repeat("b", 32)} {
		if err := ValidateHostname(good); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                "empty",
		"localhost":                       "placeholder",
		"localhost.localdomain":           "placeholder",
		"SNO1":                            "write it as sno1",
		"-sno":                            "hyphen",
		"sno-":                            "hyphen",
		"sno..example.com":                "empty label",
		"sno.":                            "empty label",
		"sno_1":                           `'_'`,
		"sno 1":                           `' '`,
		strings.Repeat("a", 64):           "longer than 63",
		strings.Repeat("a.", 32) + "a":    "65 characters",
		strings.Repeat("abcdefghij.", 25): "characters",
	} {
		err := ValidateHostname(bad)
		var hostnameErr *HostnameError
		if !errors.As(err, &hostnameErr) || hostnameErr.Name != bad || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want a *HostnameError saying %q", bad, err, want)
		}
	}
}

// liveMachineConfig reads the customization manifest of a live config through the Machine
// Config Operator's own type, strictly, and returns it with spec.config's files.
func liveMachineConfig(t *testing.T, live []byte) (mcfgv1.MachineConfig, map[string]string) {
	t.Helper()
	var mc mcfgv1.MachineConfig
	if err := k8syaml.UnmarshalStrict(liveFile(t, live, CustomizationManifestPath(RoleMaster)), &mc); err != nil {
		t.Fatalf("the MCO's MachineConfig type does not read the manifest: %v", err)
	}
	var m decodedManifest
	m.mc = mc
	if err := json.Unmarshal(mc.Spec.Config.Raw, &m.config); err != nil {
		t.Fatalf("spec.config: %v", err)
	}
	if _, _, err := ParseIgnition(mc.Spec.Config.Raw); err != nil {
		t.Fatalf("spec.config is not a valid Ignition config: %v", err)
	}
	return mc, manifestFiles(t, m)
}

func TestPrepareLiveIgnitionSetsHostname(t *testing.T) {
	for _, version := range []string{"3.0.0", "3.2.0", "3.5.0"} {
		t.Run(version, func(t *testing.T) {
			out, _, err := PrepareLiveIgnition(bipConfig(t, version), LiveIgnitionOptions{
				Installation: Installation{Disk: "/dev/disk/by-id/wwn-1"}, Hostname: "sno1.example.com",
			})
			if err != nil {
				t.Fatal(err)
			}
			ig, _, err := ParseIgnition(out)
			if err != nil || ig.Version != version {
				t.Fatalf("the live config: %v, version %v", err, ig)
			}
			if got := string(liveFile(t, out, HostnamePath)); got != "sno1.example.com\n" {
				t.Errorf("live %s is %q", HostnamePath, got)
			}
			var view struct {
				Storage struct {
					Files []struct {
						Path string `json:"path"`
						Mode *int   `json:"mode"`
					} `json:"files"`
				} `json:"storage"`
			}
			if err := json.Unmarshal(out, &view); err != nil {
				t.Fatal(err)
			}
			for _, f := range view.Storage.Files {
				if f.Path == HostnamePath && (f.Mode == nil || *f.Mode != 0o644) {
					t.Errorf("live %s mode %v, want 0644", HostnamePath, f.Mode)
				}
			}

			mc, files := liveMachineConfig(t, out)
			if mc.Name != CustomizationName(RoleMaster) || mc.Labels["machineconfiguration.openshift.io/role"] != RoleMaster {
				t.Errorf("MachineConfig %s, labels %v", mc.Name, mc.Labels)
			}
			if files[HostnamePath] != "sno1.example.com\n" {
				t.Errorf("the MachineConfig's files: %v", files)
			}

			info, err := InspectIgnition(out)
			if err != nil {
				t.Fatal(err)
			}
			if info.Hostname != "sno1.example.com" || info.InstalledHostname != "sno1.example.com" {
				t.Errorf("inspected hostname %q, installed %q", info.Hostname, info.InstalledHostname)
			}
		})
	}
}

func TestPrepareLiveIgnitionHostnameWithCustomizations(t *testing.T) {
	in := bipConfig(t, "3.2.0")
	inst := Installation{Disk: "/dev/disk/by-id/wwn-1"}
	parts := parseCustomizations(t, "foo.ign", withFooFile)
	out, _, err := PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst, Customizations: parts, Hostname: "sno1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, files := liveMachineConfig(t, out); files["/etc/foo"] != "hello world\n" || files[HostnamePath] != "sno1\n" {
		t.Errorf("the MachineConfig's files: %v", files)
	}

	other := parseCustomizations(t, "name.ign",
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/hostname","mode":420,"contents":{"source":"data:,other%0A"}}]}}`)
	_, _, err = PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst, Customizations: other, Hostname: "sno1"})
	wantError(t, err, "name.ign", "the hostname sno1", "/etc/hostname")

	_, _, err = PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst, Hostname: "Bad_Name"})
	var hostnameErr *HostnameError
	if !errors.As(err, &hostnameErr) {
		t.Errorf("a bad hostname: %v, want a *HostnameError", err)
	}
	_, _, err = PrepareLiveIgnition([]byte(`{"ignition":{"version":"3.2.0"}}`), LiveIgnitionOptions{AllowAnyIgnition: true, Hostname: "sno1"})
	wantError(t, err, "bootstrap-in-place")
}

func TestConfigHostname(t *testing.T) {
	cfg, err := ParseConfig("sno.yaml", []byte("coreOSInstallation:\n  installationDisk: /dev/sda\nhostname: sno1.example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hostname != "sno1.example.com" {
		t.Errorf("hostname %q", cfg.Hostname)
	}
	_, err = ParseConfig("sno.yaml", []byte("coreOSInstallation:\n  installationDisk: /dev/sda\nhostname: SNO_1\n"))
	var hostnameErr *HostnameError
	if !errors.As(err, &hostnameErr) || !strings.HasPrefix(err.Error(), "sno.yaml:3:11: hostname: ") {
		t.Errorf("a bad hostname: %v", err)
	}
	_, err = ParseConfig("sno.yaml", []byte("coreOSInstallation:\n  installationDisk: /dev/sda\nhostname: [a]\n"))
	wantError(t, err, "sno.yaml:3", "hostname must be a string")
}
