package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"
)

// bipConfig writes a generated bootstrap-in-place config of about size bytes to dir.
func bipConfig(t testing.TB, dir string, size int) string {
	t.Helper()
	b, err := bipgen.Generate(bipgen.Options{Size: size, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "bootstrap-in-place-for-live-iso.ign")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBuild is the main job: sno.yaml and the installer's config in, an ISO out whose
// embedded install-to-disk targets the configured disk with the configured flags.
func TestBuild(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	dir := t.TempDir()
	ign := bipConfig(t, dir, 300000)
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), `coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
  copyNetwork: true
  appendKargs:
    - console=ttyS0,115200n8
  deleteKargs: [nomodeset]
  rebootDelay: 2m
`)
	work := t.TempDir()
	r := snoIn(t, work, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg)
	if r.code != 0 {
		t.Fatalf("build failed: %s", r.stderr)
	}
	out := filepath.Join(work, "sno-fedora-coreos-38.20230718.dev.0.iso")
	if !strings.Contains(string(r.stderr), out) {
		t.Errorf("build did not say where the result is: %s", r.stderr)
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("build changed the input ISO")
	}

	var info node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &info); err != nil {
		t.Fatal(err)
	}
	in := info.Installation
	if in == nil || in.Disk != "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3" {
		t.Fatalf("installation = %+v", in)
	}
	for _, want := range [][]string{{"-i", "/opt/openshift/master.ign"}, {"--copy-network"}, {"--append-karg", "console=ttyS0,115200n8"}, {"--delete-karg", "nomodeset"}} {
		if !containsRun(in.InstallerArgs, want) {
			t.Errorf("installer args %q lack %q", in.InstallerArgs, want)
		}
	}

	// Same inputs, same bytes; and --force is needed to replace the output.
	first := fileSHA(t, out)
	wantFailure(t, snoIn(t, work, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg), "exists", "--force")
	again := filepath.Join(work, "again.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", again)
	if fileSHA(t, again) != first {
		t.Fatal("a rerun with the same inputs gave different bytes")
	}
	// A flag overrides the file.
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--installation-disk", "/dev/disk/by-path/pci-0000:00:17.0-ata-1", "-fo", again)
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", again), &info); err != nil {
		t.Fatal(err)
	}
	if info.Installation.Disk != "/dev/disk/by-path/pci-0000:00:17.0-ata-1" {
		t.Fatalf("--installation-disk did not override sno.yaml: %+v", info.Installation)
	}
}

// containsRun reports whether want appears in args as consecutive elements.
func containsRun(args, want []string) bool {
	for i := range args {
		if i+len(want) <= len(args) && slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func TestBuildFromInstallConfig(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	ic := writeFile(t, filepath.Join(dir, "install-config.yaml"), `apiVersion: v1
metadata:
  name: sno
BootstrapInPlace:
  InstallationDisk: /dev/disk/by-id/nvme-eui.0025388b
`)
	out := filepath.Join(dir, "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--install-config", ic, "-o", out)
	var info node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Installation == nil || info.Installation.Disk != "/dev/disk/by-id/nvme-eui.0025388b" {
		t.Fatalf("installation = %+v", info.Installation)
	}
}

// TestBuildBadInputs: each mistake gets an error naming it, and nothing is written.
func TestBuildBadInputs(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	synthetic := fixtures.File(t, "synthetic.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	big := bipConfig(t, t.TempDir(), 700000)
	file := func(name, content string) string { return writeFile(t, filepath.Join(dir, name), content) }
	notJSON := file("not.json", "this is not json")
	notIgnition := file("not-ignition.json", `{"kind": "Pod"}`)
	oldSpec := file("old.ign", `{"ignition": {"version": "2.2.0"}}`)
	plain := file("plain.ign", `{"ignition": {"version": "3.2.0"}}`)
	misspelled := file("misspelled.yaml", "coreOSInstallation:\n  installationDisk: /dev/sda\n  instalationDisk: /dev/sdb\n")
	noBIP := file("ic-without-bip.yaml", "apiVersion: v1\nmetadata:\n  name: sno\n")

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"not JSON", []string{"--ignition", notJSON, "--installation-disk", "/dev/sda"}, []string{"not.json"}},
		{"not Ignition", []string{"--ignition", notIgnition, "--installation-disk", "/dev/sda"}, []string{"not-ignition.json", "version"}},
		{"unsupported spec version", []string{"--ignition", oldSpec, "--installation-disk", "/dev/sda"}, []string{"2.2.0"}},
		{"not bootstrap-in-place", []string{"--ignition", plain, "--installation-disk", "/dev/sda"}, []string{"bootstrap-in-place", "--allow-any-ignition"}},
		{"no disk", []string{"--ignition", ign}, []string{"installationDisk"}},
		{"relative disk", []string{"--ignition", ign, "--installation-disk", "sda"}, []string{"sda", "absolute"}},
		{"disk with a quote", []string{"--ignition", ign, "--installation-disk", "/dev/sd'a"}, []string{"'"}},
		{"disk with a newline", []string{"--ignition", ign, "--installation-disk", "/dev/sda\nrm -rf /"}, []string{`'\n'`}},
		{"misspelled key", []string{"--ignition", ign, "--config", misspelled}, []string{"instalationDisk", "misspelled.yaml:3:"}},
		{"install-config without bootstrapInPlace", []string{"--ignition", ign, "--install-config", noBIP}, []string{"bootstrapInPlace"}},
		{"not a CoreOS ISO", []string{"--iso", synthetic, "--ignition", ign, "--installation-disk", "/dev/sda"}, []string{"unrecognized CoreOS ISO image"}},
		{"too large", []string{"--ignition", big, "--installation-disk", "/dev/sda"}, []string{"too large", "262144", "bytes over"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outDir := t.TempDir()
			args := append([]string{"build", "-o", filepath.Join(outDir, "out.iso")}, c.args...)
			if !slices.Contains(c.args, "--iso") {
				args = append(args, "--iso", iso)
			}
			wantFailure(t, sno(t, nil, args...), c.want...)
			if ents := dirEntries(t, outDir); len(ents) != 0 {
				t.Fatalf("left behind %v", ents)
			}
		})
	}
}

// TestBuildWarnsAboutKernelDiskNames: /dev/sda works but gets the warning users need.
func TestBuildWarnsAboutKernelDiskNames(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	r := sno(t, nil, "build", "--iso", iso, "--ignition", bipConfig(t, dir, 0), "--installation-disk", "/dev/sda", "-o", filepath.Join(dir, "out.iso"))
	if r.code != 0 {
		t.Fatalf("build failed: %s", r.stderr)
	}
	if !strings.Contains(string(r.stderr), "Warning") || !strings.Contains(string(r.stderr), "/dev/disk/by-id") {
		t.Fatalf("no kernel-name warning: %s", r.stderr)
	}
}
