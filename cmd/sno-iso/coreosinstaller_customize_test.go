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
// install-to-disk unit); a customize without the bootstrap-in-place config or an output is a
// usage error that says so, bad inputs are errors naming them, and nothing is written then.
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
	other := writeFile(t, filepath.Join(dir, "other.ign"), string(must(os.ReadFile(ign))))
	writeFile(t, filepath.Join(dir, "typo.yaml"), "dest-devise: /dev/sda\n")
	writeFile(t, filepath.Join(dir, "url.yaml"), "ignition-url: https://example.com/x.ign\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dest-device", disk}, 2, "give the bootstrap-in-place config"},
		{[]string{"--live-ignition", dest}, 2, "none of the live Ignition configs is the bootstrap-in-place config"},
		{[]string{"--live-ignition", ign}, 2, "give -o OUTPUT"},
		{[]string{"--live-ignition", ign, "--dest-karg-append", "nosmt"}, 2, "give the installation disk with --dest-device PATH"},
		{[]string{"--live-ignition", ign, "--live-ignition", other}, 1, "a second bootstrap-in-place config"},
		{[]string{"--live-ignition", ign, "--installer-config", filepath.Join(dir, "typo.yaml")}, 1, `did you mean "dest-device"?`},
		{[]string{"--live-ignition", ign, "--installer-config", filepath.Join(dir, "url.yaml")}, 1,
			"ignition-url is not honoured by sno-iso's install-to-disk: the installed node boots the master Ignition config"},
	} {
		out := filepath.Join(t.TempDir(), "out.iso")
		args := append(append([]string{"iso", "customize"}, c.args...), iso)
		if c.want != "give -o OUTPUT" {
			args = append(args, "-o", out)
		}
		r := runBinary(t, ci, "", nil, args...)
		if r.code != c.code || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("coreos-installer %v: exit %d, stderr %q; want exit %d and %q", args, r.code, r.stderr, c.code, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("coreos-installer %v left %s: %v", args, out, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// customizeAdditions writes the inputs of coreos-installer's customize options that build
// took on from it: a live fragment, a CA, pre- and post-install scripts.
func customizeAdditions(t *testing.T, dir string) (fragment, ca, pre, post string) {
	t.Helper()
	fragment = writeFile(t, filepath.Join(dir, "extra.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/extra","contents":{"source":"data:,extra"}}]}}`)
	ca, _ = fixtures.SelfSignedCert(t, dir)
	pre = writeFile(t, filepath.Join(dir, "prepare.sh"), "#!/bin/sh\necho pre\n")
	post = writeFile(t, filepath.Join(dir, "notify.sh"), "#!/bin/sh\necho post\n")
	return fragment, ca, pre, post
}

// TestDropInCustomizeAdditionsAreBuild: the BIP config and a fragment given with
// --live-ignition in either order, --ignition-ca, --pre-install, --post-install and two
// --installer-config files (later scalars win, lists append, the command line's come last)
// write the bytes build writes with the same settings; the live config carries the additions;
// copy-network: false in an install config does not keep the network given from the node.
func TestDropInCustomizeAdditionsAreBuild(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	fragment, ca, pre, post := customizeAdditions(t, dir)
	first := writeFile(t, filepath.Join(dir, "first.yaml"), "dest-device: /dev/sda\nappend-karg: [nosmt]\nconsole: [\"ttyS0,115200n8\"]\n")
	second := writeFile(t, filepath.Join(dir, "second.yaml"), "dest-device: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"+
		"append-karg:\n  - mitigations=off\ndelete-karg: [quiet]\n")
	built, customized := filepath.Join(dir, "built.iso"), filepath.Join(dir, "customized.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--live-ignition", fragment, "--ignition-ca", ca,
		"--pre-install", pre, "--post-install", post, "--installation-disk", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3",
		"--append-karg", "nosmt", "--append-karg", "mitigations=off", "--append-karg", "rd.debug",
		"--append-karg", "console=ttyS0,115200n8", "--delete-karg", "quiet", "-o", built)
	r := runBinary(t, dropInBinary(t), "", nil, "iso", "customize", "--live-ignition", fragment, "--live-ignition", ign,
		"--ignition-ca", ca, "--pre-install", pre, "--post-install", post, "--installer-config", first, "--installer-config", second,
		"--dest-karg-append", "rd.debug", "-o", customized, iso)
	if r.code != 0 {
		t.Fatalf("iso customize: exit %d: %s", r.code, r.stderr)
	}
	if a, b := fileSHA(t, built), fileSHA(t, customized); a != b {
		t.Fatalf("iso customize wrote %s, sno-iso build %s for the same inputs", b, a)
	}
	live := mustSno(t, nil, "ignition", "show", built)
	for _, want := range []string{`"path":"/usr/local/bin/pre-install-prepare.sh"`, `"path":"/usr/local/bin/post-install-notify.sh"`,
		`"certificateAuthorities":[{`, `"merge":[{"source":"data:;base64,`} {
		if !strings.Contains(string(live), want) {
			t.Errorf("the live config lacks %s", want)
		}
	}
	// As in coreos-installer, the network given is copied to the installed system whatever an
	// install config says.
	noCopy := writeFile(t, filepath.Join(dir, "nocopy.yaml"), "dest-device: /dev/sda\ncopy-network: false\n")
	keyfile := writeFile(t, filepath.Join(dir, "eno1.nmconnection"), string(bootKeyfile))
	withNetwork, customizedNetwork := filepath.Join(dir, "network.iso"), filepath.Join(dir, "customized-network.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/sda", "--network-keyfile", keyfile,
		"-o", withNetwork)
	if r := runBinary(t, dropInBinary(t), "", nil, "iso", "customize", "--live-ignition", ign, "--installer-config", noCopy,
		"--network-keyfile", keyfile, "-o", customizedNetwork, iso); r.code != 0 {
		t.Fatalf("iso customize with copy-network: false: exit %d: %s", r.code, r.stderr)
	}
	if fileSHA(t, withNetwork) != fileSHA(t, customizedNetwork) {
		t.Error("copy-network: false in an install config kept the keyfiles from the installed system")
	}
	inspect := string(mustSno(t, nil, "inspect", built))
	for _, want := range []string{"pre-install: /usr/local/bin/pre-install-prepare.sh\n", "post-install: /usr/local/bin/post-install-notify.sh\n"} {
		if !strings.Contains(inspect, want) {
			t.Errorf("inspect does not show %q:\n%s", want, inspect)
		}
	}
}

// TestDropInCustomizeForce: an ISO that is already customized is refused in coreos-installer's
// words; with -f it is customized from its pristine state, into the bytes build writes from
// the pristine ISO, and the input is left as it was.
func TestDropInCustomizeForce(t *testing.T) {
	pristine := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	ci := dropInBinary(t)
	customized := filepath.Join(dir, "customized.iso")
	if r := runBinary(t, ci, "", nil, "iso", "customize", "--live-ignition", ign, "--dest-device", "/dev/sda",
		"--live-karg-append", "ip=dhcp", "-o", customized, pristine); r.code != 0 {
		t.Fatalf("iso customize: exit %d: %s", r.code, r.stderr)
	}
	kargsOnly := filepath.Join(dir, "kargs.iso")
	if r := runBinary(t, ci, "", nil, "iso", "kargs", "modify", "--append", "quiet", "-o", kargsOnly, pristine); r.code != 0 {
		t.Fatalf("iso kargs modify: exit %d: %s", r.code, r.stderr)
	}
	built := filepath.Join(dir, "built.iso")
	mustSno(t, nil, "build", "--iso", pristine, "--ignition", ign, "--installation-disk", "/dev/vda", "-o", built)
	for _, in := range []string{customized, kargsOnly} {
		before := fileSHA(t, in)
		out := filepath.Join(t.TempDir(), "again.iso")
		args := []string{"iso", "customize", "--live-ignition", ign, "--dest-device", "/dev/vda", "-o", out, in}
		r := runBinary(t, ci, "", nil, args...)
		if r.code != 1 || !strings.Contains(string(r.stderr), "This ISO image is already customized; use -f to force.") {
			t.Errorf("customizing %s again without -f: exit %d: %s", in, r.code, r.stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the refused customize left %s", out)
		}
		if r := runBinary(t, ci, "", nil, append([]string{"iso", "customize", "-f"}, args[2:]...)...); r.code != 0 {
			t.Fatalf("iso customize -f: exit %d: %s", r.code, r.stderr)
		}
		if fileSHA(t, out) != fileSHA(t, built) {
			t.Errorf("iso customize -f of %s differs from build of the pristine ISO", in)
		}
		if fileSHA(t, in) != before {
			t.Errorf("iso customize -f changed its input %s", in)
		}
	}
}

// TestDropInPXECustomizeIsPXEBuild: coreos-installer's pxe customize -o OUT INITRAMFS writes the
// initrd.img that sno-iso pxe build writes for the same node over an ISO with that initramfs,
// 0600 (it carries the cluster's secrets); -o is required, and an initramfs that is already
// customized is refused.
func TestDropInPXECustomizeIsPXEBuild(t *testing.T) {
	stock := stockLiveInitramfs(t)
	iso := withInitramfs(t, stock)
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	fragment, ca, pre, post := customizeAdditions(t, dir)
	keyfile := writeFile(t, filepath.Join(dir, "eno1.nmconnection"), string(bootKeyfile))
	dest := writeFile(t, filepath.Join(dir, "dest.ign"),
		`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`)
	initramfs := filepath.Join(dir, "initrd.img")
	if err := os.WriteFile(initramfs, stock, 0o644); err != nil {
		t.Fatal(err)
	}
	pxeDir := filepath.Join(dir, "pxe")
	mustSno(t, nil, "pxe", "build", "--iso", iso, "--ignition", ign, "--live-ignition", fragment, "--ignition-ca", ca,
		"--pre-install", pre, "--post-install", post, "--installation-disk", "/dev/vda", "--customize", dest,
		"--network-keyfile", keyfile, "--append-karg", "nosmt", "-o", pxeDir)
	out := filepath.Join(dir, "customized.img")
	ci := dropInBinary(t)
	args := []string{"pxe", "customize", "--live-ignition", ign, "--live-ignition", fragment, "--ignition-ca", ca,
		"--pre-install", pre, "--post-install", post, "--dest-device", "/dev/vda", "--dest-ignition", dest,
		"--network-keyfile", keyfile, "--dest-karg-append", "nosmt"}
	r := runBinary(t, ci, "", nil, append(args, "-o", out, initramfs)...)
	if r.code != 0 {
		t.Fatalf("pxe customize: exit %d: %s", r.code, r.stderr)
	}
	if a, b := fileSHA(t, filepath.Join(pxeDir, "initrd.img")), fileSHA(t, out); a != b {
		t.Fatalf("pxe customize wrote %s, pxe build's initrd.img is %s", b, a)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the customized initramfs: %v, %v; want mode 0600", info, err)
	}
	if !strings.Contains(string(r.stderr), "ignition.firstboot ignition.platform.id=metal") {
		t.Errorf("pxe customize did not name the kernel arguments the PXE configuration needs: %s", r.stderr)
	}
	if r := runBinary(t, ci, "", nil, append(args, initramfs)...); r.code != 2 || !strings.Contains(string(r.stderr), "give -o OUTPUT") {
		t.Errorf("pxe customize without -o: exit %d: %s", r.code, r.stderr)
	}
	again := filepath.Join(dir, "again.img")
	r = runBinary(t, ci, "", nil, append(args, "-o", again, out)...)
	if r.code != 1 || !strings.Contains(string(r.stderr), "customized") {
		t.Errorf("pxe customize of a customized initramfs: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("the refused pxe customize left %s", again)
	}
}
