package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// grubScriptCheck fails the test unless GRUB's own parser accepts the config.
func grubScriptCheck(t *testing.T, cfg []byte) {
	t.Helper()
	check := testenv.Tool(t, "grub-script-check", "grub-common")
	path := filepath.Join(t.TempDir(), "grub.cfg")
	os.WriteFile(path, cfg, 0o600)
	if out, err := exec.Command(check, path).CombinedOutput(); err != nil {
		t.Fatalf("grub-script-check refuses the written grub.cfg: %v\n%s\n%s", err, out, cfg)
	}
}

// TestLiveKargsGRUBCanParse: what kargs modify and build write into grub.cfg parses with
// grub-script-check, and what GRUB would misparse is refused by both, naming the character,
// with the ISO untouched and no output written.
func TestLiveKargsGRUBCanParse(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	grubScriptCheck(t, isoFile(t, iso, "EFI/FEDORA/GRUB.CFG"))
	mustSno(t, nil, "kargs", "modify", "-a", "console=ttyS0,115200n8", "-a", "ip=192.0.2.10::192.0.2.1:255.255.255.0:node:ens3:none",
		"-a", "coreos.live.rootfs_url=https://h/r?t=1!*%+@~^(x)", "-a", "a#b", "-a", `quoted="https://h/r?a=1&b=2;c={}|<>'"`, iso)
	grubScriptCheck(t, isoFile(t, iso, "EFI/FEDORA/GRUB.CFG"))

	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	before := fileSHA(t, iso)
	for _, c := range []struct {
		args []string
		char string
	}{
		{[]string{"kargs", "modify", "-a", "x{", iso}, `'{'`},
		{[]string{"kargs", "modify", "-a", "a;reboot", iso}, `';'`},
		{[]string{"kargs", "modify", "-r", "ip=192.0.2.10::192.0.2.1:255.255.255.0:node:ens3:none=${net}", iso}, `'$'`},
		{[]string{"build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/sda", "--live-karg-append", `a"b`, "-o", filepath.Join(dir, "out.iso")}, `'"'`},
		{[]string{"pxe", "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/sda", "--live-karg-append", `#x`, "-o", filepath.Join(dir, "pxe")}, `'#'`},
	} {
		wantFailure(t, sno(t, nil, c.args...), "kernel argument", c.char)
		if fileSHA(t, iso) != before {
			t.Fatalf("%v changed the ISO", c.args)
		}
		if ents := dirEntries(t, dir); len(ents) != 1 {
			t.Fatalf("%v left %v", c.args, ents)
		}
	}
}
