package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestLookalikeNetworkFeature: the look-alike declares live-initrd-network in the ISO and in
// its initramfs alike, as RHCOS does, so build and pxe build both embed a keyfile for it.
func TestLookalikeNetworkFeature(t *testing.T) {
	testenv.Long(t, "builds the look-alike ISO")
	requireBootTools(t)
	iso := lookalikeISO(t)
	dir := t.TempDir()
	ign := bipConfig(t, dir, 0)
	key := filepath.Join(keyfileDir(t), "a.nmconnection")
	common := []string{"--iso", iso, "--ignition", ign, "--installation-disk", "/dev/vda", "--network-keyfile", key}
	mustSno(t, nil, append([]string{"build", "-o", filepath.Join(dir, "sno.iso")}, common...)...)
	mustSno(t, nil, append([]string{"pxe", "build", "-o", filepath.Join(dir, "pxe")}, common...)...)
	if got := string(mustSno(t, nil, "network", "extract", filepath.Join(dir, "sno.iso"))); !strings.Contains(got, "id=a") {
		t.Fatalf("the built ISO lacks the keyfile: %q", got)
	}
}
