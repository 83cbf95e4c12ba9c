package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestDropInISOCustomizeIsBuild: coreos-installer's iso customize with the bootstrap-in-place
// config as --live-ignition, --dest-device and the other options build has writes the very
// bytes sno-iso build writes for the same inputs (so the install it starts is build's
// install-to-disk unit); the options build has no equivalent of, and a customize without a
// live config or an output, are usage errors that say so, and write nothing.
func TestDropInISOCustomizeIsBuild(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	key := writeFile(t, filepath.Join(dir, "eth0.nmconnection"),
		"[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n\n[ipv4]\nmethod=auto\n")
	dest := writeFile(t, filepath.Join(dir, "dest.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`)
	const disk = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"
	built, customized := filepath.Join(dir, "built.iso"), filepath.Join(dir, "customized.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--installation-disk", disk, "--customize", dest,
		"--network-keyfile", key, "--append-karg", "nosmt", "--append-karg", "console=ttyS0,115200n8", "--delete-karg", "quiet",
		"--live-karg-append", "ip=dhcp", "-o", built)
	ci := dropInBinary(t)
	r := runBinary(t, ci, "", nil, "iso", "customize", "--live-ignition", ign, "--dest-device", disk, "--dest-ignition", dest,
		"--network-keyfile", key, "--dest-karg-append", "nosmt", "--dest-console", "ttyS0,115200n8", "--dest-karg-delete", "quiet",
		"--live-karg-append", "ip=dhcp", "-o", customized, iso)
	if r.code != 0 {
		t.Fatalf("coreos-installer iso customize: exit %d: %s", r.code, r.stderr)
	}
	if a, b := fileSHA(t, built), fileSHA(t, customized); a != b {
		t.Fatalf("iso customize wrote %s, sno-iso build %s for the same inputs", b, a)
	}
	if !strings.Contains(string(r.stderr), "Wrote "+customized+": boots the live system, runs bootkube, installs to "+disk) {
		t.Errorf("iso customize said %q", r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pre-install", "pre.sh", "--live-ignition", ign}, "--pre-install is not provided"},
		{[]string{"--dest-device", disk}, "give the bootstrap-in-place config"},
		{[]string{"--live-ignition", ign, "--live-ignition", dest}, "--live-ignition given 2 times"},
		{[]string{"--live-ignition", ign}, "give -o OUTPUT"},
	} {
		out := filepath.Join(t.TempDir(), "out.iso")
		args := append(append([]string{"iso", "customize"}, c.args...), iso)
		if c.want != "give -o OUTPUT" {
			args = append(args, "-o", out)
		}
		r := runBinary(t, ci, "", nil, args...)
		if r.code != 2 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("coreos-installer %v: exit %d, stderr %q; want exit 2 and %q", args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("coreos-installer %v left %s: %v", args, out, err)
		}
	}
}
