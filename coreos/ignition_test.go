package coreos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/bipgen"
)

var generated sync.Map // version → []byte

// bipConfig returns a generated bootstrap-in-place config like openshift-install's.
func bipConfig(t testing.TB, version string) []byte {
	t.Helper()
	if b, ok := generated.Load(version); ok {
		return b.([]byte)
	}
	b, err := bipgen.Generate(bipgen.Options{Seed: 1, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	generated.Store(version, b)
	return b
}

// entries indexes a config's files by path, units by name and users by name, as generic
// JSON so that every field is compared.
func entries(t *testing.T, raw []byte) (files, units, users map[string]any, version string) {
	t.Helper()
	var c struct {
		Ignition struct{ Version string }
		Storage  struct{ Files []map[string]any }
		Systemd  struct{ Units []map[string]any }
		Passwd   struct{ Users []map[string]any }
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	index := func(list []map[string]any, key string) map[string]any {
		m := map[string]any{}
		for _, e := range list {
			name := e[key].(string)
			if _, dup := m[name]; dup {
				t.Errorf("%s %s appears twice", key, name)
			}
			m[name] = e
		}
		return m
	}
	return index(c.Storage.Files, "path"), index(c.Systemd.Units, "name"), index(c.Passwd.Users, "name"), c.Ignition.Version
}

func decodeDataURL(t *testing.T, source string) string {
	t.Helper()
	_, b64, ok := strings.Cut(source, ";base64,")
	if !ok {
		t.Fatalf("not a base64 data URL: %.40s", source)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSetInstallToDiskRoundTrip: for each spec version, the output keeps the version and
// every other file, unit and user, and carries the rendered unit and script.
func TestSetInstallToDiskRoundTrip(t *testing.T) {
	inst := Installation{
		Disk: "/dev/disk/by-id/nvme-SAMSUNG_MZ1LB960HAJQ-00007_S435NE0M", CopyNetwork: true,
		AppendKargs: []string{"ip=dhcp"}, WipeDisk: true,
	}
	for _, version := range SupportedIgnitionVersions() {
		t.Run(version, func(t *testing.T) {
			raw := bipConfig(t, version)
			ig, warnings, err := ParseIgnition(raw)
			if err != nil {
				t.Fatal(err)
			}
			// Ignition itself notices the installer's unit flaw that the [Install] section fixes.
			if len(warnings) != 1 || !strings.Contains(warnings[0].Message, `"install-to-disk.service" is enabled, but has no install section`) {
				t.Errorf("warnings on the installer-like config: %v", warnings)
			}
			if ig.Version != version || !ig.IsBootstrapInPlace() {
				t.Fatalf("version %q, bootstrap-in-place %v", ig.Version, ig.IsBootstrapInPlace())
			}
			untouched, err := ig.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if err := ig.SetInstallToDisk(inst); err != nil {
				t.Fatal(err)
			}
			out, err := ig.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			again, warnings, err := ParseIgnition(out)
			if err != nil || again.Version != version {
				t.Fatalf("output does not parse as %s: %v", version, err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings on the output: %v", warnings)
			}

			inFiles, inUnits, inUsers, _ := entries(t, untouched)
			outFiles, outUnits, outUsers, outVersion := entries(t, out)
			if outVersion != version {
				t.Errorf("output version %q", outVersion)
			}
			if !reflect.DeepEqual(inUsers, outUsers) {
				t.Error("users changed")
			}
			script := outFiles[InstallToDiskScriptPath].(map[string]any)
			delete(inFiles, InstallToDiskScriptPath)
			delete(outFiles, InstallToDiskScriptPath)
			if !reflect.DeepEqual(inFiles, outFiles) {
				t.Error("files other than install-to-disk.sh changed")
			}
			unit := outUnits[InstallToDiskUnitName].(map[string]any)
			delete(inUnits, InstallToDiskUnitName)
			delete(outUnits, InstallToDiskUnitName)
			if !reflect.DeepEqual(inUnits, outUnits) {
				t.Error("units other than install-to-disk.service changed")
			}

			if unit["contents"] != RenderInstallToDiskUnit() || unit["enabled"] != true {
				t.Errorf("install-to-disk.service is %v", unit)
			}
			if script["mode"] != float64(0o555) {
				t.Errorf("script mode %v", script["mode"])
			}
			source := script["contents"].(map[string]any)["source"].(string)
			if got := decodeDataURL(t, source); got != RenderInstallToDiskScript(inst, true) {
				t.Errorf("script in the config:\n%s", got)
			}
		})
	}
}

// TestRoundTripKeepsInputData checks against the raw input, not a re-marshalled one: the
// data of every other file is byte for byte the installer's.
func TestRoundTripKeepsInputData(t *testing.T) {
	raw := bipConfig(t, "3.2.0")
	out, _, err := PrepareLiveIgnition(raw, LiveIgnitionOptions{Installation: Installation{Disk: "/dev/disk/by-path/pci-0000:03:00.0-nvme-1"}})
	if err != nil {
		t.Fatal(err)
	}
	inFiles, _, _, _ := entries(t, raw)
	outFiles, _, _, _ := entries(t, out)
	if len(inFiles) != len(outFiles) {
		t.Fatalf("%d files in, %d out", len(inFiles), len(outFiles))
	}
	for path, f := range inFiles {
		if path == InstallToDiskScriptPath {
			continue
		}
		in, outF := f.(map[string]any), outFiles[path].(map[string]any)
		if !reflect.DeepEqual(in["contents"].(map[string]any)["source"], outF["contents"].(map[string]any)["source"]) ||
			in["mode"] != outF["mode"] {
			t.Errorf("%s changed", path)
		}
	}
}

func TestSetInstallToDiskReplacesOrAdds(t *testing.T) {
	inst := Installation{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}
	var c map[string]any
	if err := json.Unmarshal(bipConfig(t, "3.1.0"), &c); err != nil {
		t.Fatal(err)
	}
	// Without the installer's unit and script: they are added.
	storage, systemd := c["storage"].(map[string]any), c["systemd"].(map[string]any)
	storage["files"] = without(storage["files"].([]any), "path", InstallToDiskScriptPath)
	systemd["units"] = without(systemd["units"].([]any), "name", InstallToDiskUnitName)
	stripped, _ := json.Marshal(c)

	for name, raw := range map[string][]byte{"present": bipConfig(t, "3.1.0"), "absent": stripped} {
		t.Run(name, func(t *testing.T) {
			ig, _, err := ParseIgnition(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := ig.SetInstallToDisk(inst); err != nil {
				t.Fatal(err)
			}
			out, _ := ig.Marshal()
			files, units, _, _ := entries(t, out) // entries fails on duplicates
			unit, ok := units[InstallToDiskUnitName].(map[string]any)
			if !ok || unit["contents"] != RenderInstallToDiskUnit() {
				t.Fatalf("install-to-disk.service: %v", unit)
			}
			script, ok := files[InstallToDiskScriptPath].(map[string]any)
			if !ok {
				t.Fatal("no install-to-disk.sh")
			}
			got := decodeDataURL(t, script["contents"].(map[string]any)["source"].(string))
			if got != RenderInstallToDiskScript(inst, true) {
				t.Errorf("script:\n%s", got)
			}
			info, err := InspectIgnition(out)
			if err != nil || info.Installation.Disk != inst.Disk {
				t.Errorf("inspected %+v, %v", info, err)
			}
		})
	}
}

func without(list []any, key, value string) []any {
	var kept []any
	for _, e := range list {
		if e.(map[string]any)[key] != value {
			kept = append(kept, e)
		}
	}
	return kept
}

func TestParseIgnitionErrors(t *testing.T) {
	for _, c := range []struct {
		name, input, want string
	}{
		{"empty", "", "the input is empty"},
		{"not JSON", "variant: fcos\nversion: 1.4.0\n", "not JSON"},
		{"truncated JSON", `{"ignition": {"version": "3.2.0"`, "line 1"},
		{"array", `[{"ignition": {}}]`, "top-level value is a JSON array"},
		{"JSON that is not Ignition", `{"apiVersion": "v1", "kind": "ConfigMap"}`, "without ignition.version"},
		{"spec 2.2", `{"ignition": {"version": "2.2.0"}}`, `"2.2.0" is not supported`},
		{"spec 3.9", `{"ignition": {"version": "3.9.0"}}`, `"3.9.0" is not supported: sno-iso reads 3.0.0 to 3.5.0`},
		{"experimental", `{"ignition": {"version": "3.6.0-experimental"}}`, "experimental"},
		{"version not a string", `{"ignition": {"version": 3}}`, "ignition.version is a JSON number, not a string"},
		{"invalid file", `{"ignition": {"version": "3.2.0"}, "storage": {"files": [{"path": "etc/motd"}]}}`,
			"$.storage.files.0.path (line 1, column 67): path not absolute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseIgnition([]byte(c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestParseIgnitionWarningsHavePaths(t *testing.T) {
	raw := `{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/etc/motd", "contents": {"source": "data:,hi"}, "mdoe": 420}]}}`
	_, warnings, err := ParseIgnition([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0].Path != "$.storage.files.0.mdoe" || !strings.Contains(warnings[0].Message, "unused key mdoe") {
		t.Errorf("warnings %v", warnings)
	}
}

func TestPrepareLiveIgnitionRefusesOtherConfigs(t *testing.T) {
	other := []byte(`{"ignition": {"version": "3.4.0"}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}]}}`)
	inst := Installation{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}
	if _, _, err := PrepareLiveIgnition(other, LiveIgnitionOptions{Installation: inst}); !errors.Is(err, ErrNotBootstrapInPlace) ||
		!strings.Contains(err.Error(), "not a bootstrap-in-place Ignition config") || strings.Contains(err.Error(), "--") {
		t.Errorf("error %v", err)
	}
	out, warnings, err := PrepareLiveIgnition(other, LiveIgnitionOptions{Installation: inst, AllowAnyIgnition: true})
	if err != nil || !bytes.Equal(out, other) {
		t.Errorf("with AllowAnyIgnition: %v, output %s", err, out)
	}
	if len(warnings) != 1 || warnings[0].Path != "installationDisk" {
		t.Errorf("warnings %v, want one saying the disk is ignored", warnings)
	}
	ig, _, _ := ParseIgnition(other)
	if err := ig.SetInstallToDisk(inst); err == nil {
		t.Error("SetInstallToDisk accepted a config without bootkube")
	}
}

func TestPrepareLiveIgnitionInstallationErrors(t *testing.T) {
	raw := bipConfig(t, "3.2.0")
	for _, c := range []struct {
		name string
		inst Installation
		want string
	}{
		{"no disk", Installation{}, "no installation disk"},
		{"relative disk", Installation{Disk: "sda"}, "not an absolute path"},
		{"quote", Installation{Disk: "/dev/sd'a"}, `character '\''`},
		{"newline", Installation{Disk: "/dev/sda\nreboot"}, `character '\n'`},
		{"karg with a space", Installation{Disk: "/dev/sda", AppendKargs: []string{"a b"}}, "appendKargs[0]"},
		{"reboot delay in seconds", Installation{Disk: "/dev/sda", RebootDelay: ptr(30 * time.Second)}, "whole number of minutes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := PrepareLiveIgnition(raw, LiveIgnitionOptions{Installation: c.inst})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// The missing-disk error tells which disk the input targeted.
	_, _, err := PrepareLiveIgnition(raw, LiveIgnitionOptions{})
	if err == nil || !strings.Contains(err.Error(), "targets /dev/sda") {
		t.Errorf("error %v does not name the input's disk", err)
	}
}

func TestPrepareLiveIgnitionWarnsAboutKernelNames(t *testing.T) {
	_, warnings, err := PrepareLiveIgnition(bipConfig(t, "3.2.0"), LiveIgnitionOptions{Installation: Installation{Disk: "/dev/nvme0n1"}})
	if err != nil {
		t.Fatal(err)
	}
	var diskWarnings []Warning
	for _, w := range warnings {
		if w.Path == "installationDisk" {
			diskWarnings = append(diskWarnings, w)
		}
	}
	if len(diskWarnings) != 1 || !strings.Contains(diskWarnings[0].Message, "/dev/disk/by-id") {
		t.Errorf("warnings %v", warnings)
	}
}

func ptr[T any](v T) *T { return &v }
