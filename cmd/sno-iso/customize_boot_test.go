package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestCustomizeBootUnderQEMU boots the look-alike made with `coreos-installer iso customize`
// (through the drop-in's link name) with every option that reaches the node, and checks what
// the look-alike saw: the kernel arguments of the live system, the keyfile in its initramfs,
// the extra live config's file written by the stand-in Ignition, which trusts the CA too; the
// install's events in order (the pre-install script, the disk write with the installed node's
// kernel arguments and --copy-network, the post-install script, the reboot); and the
// installed node's MachineConfig carrying the dest fragment and the CA.
func TestCustomizeBootUnderQEMU(t *testing.T) {
	testenv.Long(t, "boot tests take minutes")
	requireBootTools(t)
	pristine := lookalikeISO(t)
	dir := t.TempDir()
	ign := filepath.Join(dir, "bootstrap-in-place-for-live-iso.ign")
	if err := os.WriteFile(ign, bipBootInput, 0o600); err != nil {
		t.Fatal(err)
	}
	extra := writeFile(t, filepath.Join(dir, "extra.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/sno-extra-live","contents":{"source":"data:,extra-live"}}]}}`)
	dest := writeFile(t, filepath.Join(dir, "dest.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,installed-node"}}]}}`)
	ca, _ := fixtures.SelfSignedCert(t, dir)
	caPEM, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	// The scripts are written for the look-alike: they note that they ran among the install's
	// events, which /init reports in order.
	pre := writeFile(t, filepath.Join(dir, "pre.sh"), "#!/bin/sh\necho pre-install ran >>/run/lookalike/events\n")
	post := writeFile(t, filepath.Join(dir, "post.sh"), "#!/bin/sh\necho post-install ran >>/run/lookalike/events\n")
	keyfile := writeFile(t, filepath.Join(dir, "eno1.nmconnection"), string(bootKeyfile))

	out := filepath.Join(dir, "customized.iso")
	r := runBinary(t, dropInBinary(t), "", nil, "iso", "customize", "--live-ignition", ign, "--live-ignition", extra,
		"--dest-device", bipBootDisk, "--dest-ignition", dest, "--pre-install", pre, "--post-install", post, "--ignition-ca", ca,
		"--network-keyfile", keyfile, "--dest-karg-append", "nosmt", "--live-karg-append", "lookalike.systemd",
		"--live-karg-append", "lookalike.minute=1", "-o", out, pristine)
	if r.code != 0 {
		t.Fatalf("coreos-installer iso customize: exit %d: %s", r.code, r.stderr)
	}
	live := mustSno(t, nil, "ignition", "show", out)

	log := filepath.Join(t.TempDir(), "serial.log")
	vmSlots <- struct{}{}
	start := time.Now()
	report, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "boot"), "--timeout", "300", "--log", log,
		"--expect-karg", "lookalike.systemd lookalike.minute=1", "--expect-ignition-sha256", bytesSHA(live),
		"--expect-network", "eno1.nmconnection="+bytesSHA(bootKeyfile), "bios-cd", out).CombinedOutput()
	<-vmSlots
	t.Logf("booted in %.1fs:\n%s", time.Since(start).Seconds(), report)
	if err != nil {
		t.Fatalf("scripts/boot: %v (kernel arguments, config.ign or the keyfile do not match; see the log above)", err)
	}
	seen := seenLines(string(report))

	for _, want := range []string{
		"minisystemd merged-config file /etc/sno-extra-live sha256=" + bytesSHA([]byte("extra-live")),
		"minisystemd trusts ignition-ca sha256=" + bytesSHA(caPEM),
		"minisystemd unit install-to-disk.service result=success exit=exited/0",
	} {
		if !slices.Contains(seen, want) {
			t.Errorf("the look-alike did not report %q", want)
		}
	}
	var events []string
	var manifest string
	for _, line := range seen {
		if e, ok := strings.CutPrefix(line, "event "); ok {
			events = append(events, e)
		}
		if m, ok := strings.CutPrefix(line, "installed-manifest 99_openshift-installer-ignition_master.yaml base64="); ok {
			b, err := base64.StdEncoding.DecodeString(m)
			if err != nil {
				t.Fatal(err)
			}
			manifest = string(b)
		}
	}
	wantEvents := []string{
		"pre-install ran",
		"coreos-installer install -i /opt/openshift/master.ign --copy-network --append-karg nosmt " + bipBootDisk,
		"post-install ran",
		"shutdown -r +1",
	}
	if !slices.Equal(events, wantEvents) {
		t.Errorf("the install's events were\n  %s\nwant\n  %s", strings.Join(events, "\n  "), strings.Join(wantEvents, "\n  "))
	}
	// The installed node's config comes from the Machine Config Operator: the MachineConfig
	// bootkube hands it carries the dest fragment and the CA.
	for _, want := range []string{"data:,installed-node", base64.StdEncoding.EncodeToString(caPEM)} {
		if !strings.Contains(manifest, want) {
			t.Errorf("the installed node's MachineConfig lacks %.60s:\n%s", want, manifest)
		}
	}
}

// seenLines are the SNO-REPORT lines scripts/boot lists as "seen: LINE".
func seenLines(report string) []string {
	var lines []string
	for _, line := range strings.Split(report, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "seen: "); ok {
			lines = append(lines, s)
		}
	}
	return lines
}
