package coreos

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func FuzzParseIgnition(f *testing.F) {
	f.Add([]byte(`{"ignition":{"version":"3.2.0"},"systemd":{"units":[{"name":"bootkube.service"}]},"storage":{"files":[{"path":"/opt/openshift/a","contents":{"source":"data:,x"}}]}}`))
	f.Add([]byte(`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"a"}]}}`))
	f.Add([]byte(`{"ignition":{"version":"2.2.0"}}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ig, _, err := ParseIgnition(raw)
		if err != nil {
			return
		}
		// Whatever parses is written back in its version and parses again.
		out, err := ig.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, _, err := ParseIgnition(out)
		if err != nil || again.Version != ig.Version {
			t.Fatalf("re-parsing the output: %v", err)
		}
		if ig.IsBootstrapInPlace() {
			if err := ig.SetInstallToDisk(Installation{Disk: "/dev/disk/by-id/x"}); err != nil {
				t.Logf("SetInstallToDisk: %v", err) // e.g. a directory at the script's path
			}
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("coreOSInstallation:\n  installationDisk: /dev/sda\n  copyNetwork: true\n  appendKargs: [a=1]\n  rebootDelay: 2m\n"))
	f.Add([]byte("bootstrapInPlace:\n  installationDisk: /dev/disk/by-id/x\n  wipeDisk: false\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("sno.yaml", data)
		if err != nil {
			return
		}
		// A file that loads has a safe disk (or none yet) and valid kargs and delay.
		inst := cfg.Installation
		if inst.Disk == "" {
			inst.Disk = "/dev/disk/by-id/x"
		}
		if _, err := inst.Validate(); err != nil {
			t.Fatalf("loaded settings do not validate: %v", err)
		}
		if cfg.BMC != nil && !strings.Contains(cfg.BMC.Address, "://") {
			t.Fatalf("loaded a bmc section without a usable address: %+v", cfg.BMC)
		}
		if cfg.Hostname != "" && ValidateHostname(cfg.Hostname) != nil {
			t.Fatalf("loaded a hostname the node cannot take: %q", cfg.Hostname)
		}
	})
}

// FuzzValidateHostname: a name that passes is what /etc/hostname can hold and the node
// registers under, and the live and installed files carry exactly it.
func FuzzValidateHostname(f *testing.F) {
	for _, seed := range []string{"sno1", "sno1.example.com", "SNO1", "a..b", "-a", "localhost", "a_b", strings.Repeat("a", 65)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateHostname(name) != nil {
			return
		}
		if len(name) > maxHostnameLength || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" ||
			strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
			t.Fatalf("accepted %q", name)
		}
		custom, err := hostnameCustomization(name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		mc, _, err := MergeCustomizations(RoleMaster, []*Customization{custom}, "")
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		manifest, err := mc.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := machineConfig("mc.yaml", manifest); !ok || got.Hostname != name {
			t.Fatalf("the MachineConfig reads back as %+v, want hostname %q", got, name)
		}
	})
}

func FuzzParseInstallConfig(f *testing.F) {
	f.Add([]byte("bootstrapInPlace:\n  installationDisk: /dev/sda\n"))
	f.Add([]byte("BootstrapInPlace: {InstallationDisk: /dev/vda}\nmetadata: {name: sno}\n"))
	f.Add([]byte("? [a]\n: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := ParseInstallConfig("install-config.yaml", data)
		if err != nil {
			return
		}
		if _, err := ValidateDisk(inst.Disk); err != nil {
			t.Fatalf("accepted disk %q: %v", inst.Disk, err)
		}
	})
}

func FuzzInspectIgnition(f *testing.F) {
	f.Add([]byte(`{"storage":{"files":[{"path":"/usr/local/bin/install-to-disk.sh","contents":{"source":"data:,coreos-installer%20install%20-n%20/dev/sda%0Ashutdown%20-r%20+1"}}]}}`))
	f.Add([]byte(`{"storage":{"files":[{"path":"/opt/openshift/openshift/99.yaml","contents":{"source":"data:,kind:%20MachineConfig"}}]}}`))
	f.Add([]byte(`{"storage":{"files":[{"path":"/usr/local/bin/install-to-disk.sh","contents":{"compression":"gzip","source":"data:;base64,H4sIAAAAAAAA/0vOzy1ITS5KTVEozsgvzy/KSS3WLShKzUvOz0tRSM/PS8xMAQAqBkjuHAAAAA=="}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		info, err := InspectIgnition(raw)
		if err == nil && info.Installation.Disk == "" {
			t.Fatal("no error and no disk")
		}
	})
}

func FuzzParseCustomization(f *testing.F) {
	f.Add([]byte(kargsMachineConfig))
	f.Add([]byte(withFooFile))
	f.Add([]byte(`{"ignition":{"version":"3.3.0"},"kernelArguments":{"shouldExist":["a"]},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k"]}]}}`))
	f.Add([]byte("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nspec:\n  extensions: [usbguard]\n  config: {ignition: {version: 3.1.0}, systemd: {units: [{name: a.service, mask: true}]}}\n"))
	f.Add([]byte("kind: MachineConfig\nspec: &a {config: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCustomization("in", data)
		if err != nil {
			return
		}
		mc, _, err := MergeCustomizations(RoleMaster, []*Customization{c}, "")
		if err != nil {
			t.Logf("merge: %v", err) // e.g. a 3.5 feature the MCO cannot read
			return
		}
		if mc == nil {
			return
		}
		// Whatever is written reads back as the same MachineConfig.
		out, err := mc.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseCustomization("out", out)
		if err != nil {
			t.Fatalf("the manifest does not parse back: %v\n%s", err, out)
		}
		again, _, err := MergeCustomizations(RoleMaster, []*Customization{back}, "")
		if err != nil || !reflect.DeepEqual(again, mc) {
			t.Fatalf("read back as %+v (%v), want %+v", again, err, mc)
		}
	})
}

// FuzzPointerCustomization: a config compared with itself, written again by its own types
// or with its keys reordered, is never a customization (the installer's bug).
func FuzzPointerCustomization(f *testing.F) {
	f.Add([]byte(pointer))
	f.Add([]byte(withFooFile))
	f.Add([]byte(`{"ignition":{"version":"3.0.0","config":{"replace":{"source":"https://x/"}}},"storage":{"files":[{"path":"/a","append":[{"source":"data:,x"}]}]}}`))
	f.Add([]byte(`{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldNotExist":["quiet"]},"storage":{"links":[{"path":"/b","target":"/a"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ig, _, err := ParseIgnition(raw)
		if err != nil {
			return
		}
		remarshaled, err := ig.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := json.Unmarshal(raw, &generic); err != nil {
			t.Fatal(err)
		}
		sortedKeys, err := json.Marshal(generic)
		if err != nil {
			t.Fatal(err)
		}
		for _, again := range [][]byte{raw, remarshaled, sortedKeys} {
			mc, _, err := PointerCustomization(RoleWorker, again, raw)
			if err != nil || mc != nil {
				t.Fatalf("the same config again = %+v, %v; want nothing", mc, err)
			}
		}
	})
}
