package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"

	igntypes "github.com/coreos/ignition/v2/config/v3_4/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	k8syaml "sigs.k8s.io/yaml"
)

const (
	pointerIgn = `{"ignition":{"config":{"merge":[{"source":"https://api-int.sno.example.com:22623/config/master"}]},` +
		`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,Q0EK"}]}},"version":"3.2.0"}}`
	// pointerReserialized is pointerIgn as jq or an editor would write it back: keys in
	// another order, indented, the CA as a percent-encoded data URL.
	pointerReserialized = `{
  "ignition": {
    "version": "3.2.0",
    "security": {"tls": {"certificateAuthorities": [{"source": "data:,CA%0A"}]}},
    "config": {"merge": [{"source": "https://api-int.sno.example.com:22623/config/master"}]}
  }
}`
	pointerWithFile = `{"ignition":{"config":{"merge":[{"source":"https://api-int.sno.example.com:22623/config/master"}]},` +
		`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,Q0EK"}]}},"version":"3.2.0"},` +
		`"storage":{"files":[{"path":"/etc/foo","mode":420,"contents":{"source":"data:,foo"}}]}}`
)

// manifest is a MachineConfig read through the Machine Config Operator's own API type
// (strictly: a field the MCO does not know fails), with spec.config read through
// Ignition's config type.
type manifest struct {
	mcfgv1.MachineConfig
	config igntypes.Config
}

func readManifestYAML(t *testing.T, data []byte) manifest {
	t.Helper()
	var m manifest
	if err := k8syaml.UnmarshalStrict(data, &m.MachineConfig); err != nil {
		t.Fatalf("the MCO's MachineConfig type does not read it: %v\n%s", err, data)
	}
	if m.APIVersion != "machineconfiguration.openshift.io/v1" || m.Kind != "MachineConfig" {
		t.Fatalf("not a MachineConfig:\n%s", data)
	}
	if err := json.Unmarshal(m.Spec.Config.Raw, &m.config); err != nil {
		t.Fatalf("spec.config: %v\n%s", err, data)
	}
	return m
}

func (m manifest) paths() []string {
	var paths []string
	for _, f := range m.config.Storage.Files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	return paths
}

func TestMachineconfigNotCustomized(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, filepath.Join(dir, "default.ign"), pointerIgn)
	for name, user := range map[string]string{"same bytes": pointerIgn, "re-serialized": pointerReserialized} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "mc.yaml")
			userPath := writeFile(t, filepath.Join(dir, "master.ign"), user)
			for _, args := range [][]string{{}, {"-o", out}} {
				r := sno(t, nil, append([]string{"machineconfig", "--role", "master", "--base", base, userPath}, args...)...)
				if r.code != 0 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), "nothing was customized") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0, nothing written, \"nothing was customized\"", r.code, r.stdout, r.stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("%s was written", out)
			}
		})
	}
}

func TestMachineconfigCustomized(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, filepath.Join(dir, "default.ign"), pointerIgn)
	user := writeFile(t, filepath.Join(dir, "worker.ign"), pointerWithFile)
	m := readManifestYAML(t, mustSno(t, nil, "machineconfig", "--role", "worker", "--base", base, user))
	if m.Name != "99-installer-ignition-worker" || m.Labels["machineconfiguration.openshift.io/role"] != "worker" {
		t.Fatalf("metadata = %+v", m.ObjectMeta)
	}
	if !slices.Equal(m.paths(), []string{"/etc/foo"}) || len(m.config.Ignition.Config.Merge) != 0 || m.config.Ignition.Config.Replace.Source != nil {
		t.Fatalf("spec.config = %+v; want /etc/foo and no merge source", m.config)
	}

	out := filepath.Join(dir, "99_openshift-installer-ignition_worker.yaml")
	r := sno(t, nil, "machineconfig", "--role", "worker", "--base", base, user, "-o", out)
	if r.code != 0 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if readManifestYAML(t, written).Name != "99-installer-ignition-worker" {
		t.Fatalf("wrote:\n%s", written)
	}
	wantFailure(t, sno(t, nil, "machineconfig", "--role", "worker", "--base", base, user, "-o", out), "exists", "--force")
	mustSno(t, nil, "machineconfig", "--role", "worker", "--base", base, user, "-fo", out)
}

func TestMachineconfigErrors(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, filepath.Join(dir, "master.ign"), pointerWithFile)
	cex := writeFile(t, filepath.Join(dir, "cex.ign"), `{"ignition":{"version":"3.5.0"},"storage":{"luks":[{"name":"d","device":"/dev/disk/by-partlabel/d","cex":{"enabled":true}}]}}`)
	notIgnition := writeFile(t, filepath.Join(dir, "base.json"), `{"kind":"Pod"}`)
	if r := sno(t, nil, "machineconfig", "--role", "infra", user); r.code != 2 || !strings.Contains(string(r.stderr), "infra") {
		t.Fatalf("a bad role: exit %d, %s; want a usage error", r.code, r.stderr)
	}
	if r := sno(t, nil, "machineconfig", "--role", "master"); r.code != 2 {
		t.Fatalf("no argument: exit %d, want 2", r.code)
	}
	out := filepath.Join(dir, "out.yaml")
	wantFailure(t, sno(t, nil, "machineconfig", "--role", "master", "-o", out, cex), "cex.ign", "3.5.0", "3.1.0 to 3.4.0")
	wantFailure(t, sno(t, nil, "machineconfig", "--role", "master", "--base", notIgnition, user), "base", "ignition.version")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("an output was written for a failure")
	}
}

// embeddedFile returns a file of the config embedded in iso, decoded.
func embeddedFile(t *testing.T, iso, path string) []byte {
	t.Helper()
	var config struct {
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Mode     int    `json:"mode"`
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(mustSno(t, nil, "ignition", "show", iso), &config); err != nil {
		t.Fatal(err)
	}
	for _, f := range config.Storage.Files {
		if f.Path == path {
			if f.Mode != 0o644 {
				t.Errorf("%s has mode %o, want 644", path, f.Mode)
			}
			data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(f.Contents.Source, "data:;base64,"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return data
		}
	}
	return nil
}

const customizationPath = "/opt/openshift/openshift/99_openshift-installer-ignition_master.yaml"

// TestBuildCustomize is the round trip: customizations from sno.yaml and --customize go
// into the embedded config as one MachineConfig, and inspect lists it.
func TestBuildCustomize(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	if err := os.Mkdir(filepath.Join(dir, "custom"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "custom", "chrony.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/chrony.conf","mode":420,"overwrite":true,"contents":{"source":"data:,server%20ntp.example.com%20iburst%0A"}}]}}`)
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\ncustomizations:\n  - custom/chrony.ign\n")
	unit := writeFile(t, filepath.Join(t.TempDir(), "unit.ign"),
		`{"ignition":{"version":"3.1.0"},"systemd":{"units":[{"name":"hello.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]}}`)
	kargs := writeFile(t, filepath.Join(t.TempDir(), "kargs.yaml"), `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 05-master-kargs
  labels:
    machineconfiguration.openshift.io/role: master
spec:
  kernelArguments: [nosmt]
`)
	// sno.yaml's list, then the flags' list, which replaces it.
	fromFile := filepath.Join(dir, "from-file.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", fromFile)
	if m := readManifestYAML(t, embeddedFile(t, fromFile, customizationPath)); !slices.Equal(m.paths(), []string{"/etc/chrony.conf"}) {
		t.Fatalf("sno.yaml's customization is missing: %+v", m.Spec)
	}
	out := filepath.Join(dir, "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--customize", unit, "--customize", kargs, "-o", out)

	var info node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Installation == nil || !slices.Contains(info.Installation.MachineConfigs, "99-installer-ignition-master") {
		t.Fatalf("inspect does not list the MachineConfig: %+v", info.Installation)
	}
	if text := mustSno(t, nil, "inspect", out); !bytes.Contains(text, []byte("99-installer-ignition-master")) {
		t.Fatalf("inspect's text does not name the MachineConfig:\n%s", text)
	}
	m := readManifestYAML(t, embeddedFile(t, out, customizationPath))
	if len(m.paths()) != 0 || len(m.config.Systemd.Units) != 1 ||
		m.config.Systemd.Units[0].Name != "hello.service" || !slices.Equal(m.Spec.KernelArguments, []string{"nosmt"}) {
		t.Fatalf("want the flags' unit and kernel argument, without sno.yaml's file: %+v", m.Spec)
	}
	if v := m.config.Ignition.Version; v != "3.1.0" {
		t.Errorf("spec.config version %v, want unit.ign's 3.1.0", v)
	}
}

func TestBuildCustomizeNothing(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	empty := writeFile(t, filepath.Join(dir, "empty.ign"), `{"ignition":{"version":"3.4.0"}}`)
	out := filepath.Join(dir, "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", bipConfig(t, dir, 0), "--installation-disk", "/dev/vda", "--customize", empty, "-o", out)
	if data := embeddedFile(t, out, customizationPath); data != nil {
		t.Fatalf("an empty fragment gave a MachineConfig:\n%s", data)
	}
}

func TestBuildCustomizeConflict(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	file := func(name, data string) string {
		return writeFile(t, filepath.Join(dir, name), `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,`+data+`"}}]}}`)
	}
	a, b := file("a.ign", "one"), file("b.ign", "two")
	outDir := t.TempDir()
	wantFailure(t, sno(t, nil, "build", "--iso", iso, "--ignition", bipConfig(t, dir, 0), "--installation-disk", "/dev/vda",
		"--customize", a, "--customize", b, "-o", filepath.Join(outDir, "sno.iso")), "/etc/motd", a, b)
	if ents := dirEntries(t, outDir); len(ents) != 0 {
		t.Fatalf("left behind %v", ents)
	}
}
