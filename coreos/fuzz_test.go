package coreos

import (
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
