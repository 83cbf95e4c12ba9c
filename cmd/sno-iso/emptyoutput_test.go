package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestEmptyOutputIsUsageError: an output option given an empty value (an unset shell
// variable) is refused with exit 2 by every command that writes, never taken as "edit the
// input in place" or "use the default name", and nothing is written anywhere.
func TestEmptyOutputIsUsageError(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "in.iso")
	os.WriteFile(iso, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"), 0o644)
	cfg := filepath.Join(dir, "c.ign")
	os.WriteFile(cfg, []byte(smallConfig), 0o644)
	key := filepath.Join(dir, "eth0.nmconnection")
	os.WriteFile(key, []byte("[connection]\nid=eth0\ntype=ethernet\n"), 0o600)
	before := fileSHA(t, iso)
	entries := dirEntries(t, dir)

	cases := [][]string{
		{"ignition", "embed", "-i", cfg, "-o", "", iso},
		{"ignition", "embed", "-i", cfg, "--output=", iso},
		{"ignition", "embed", "-f", "-i", cfg, "--output", "", iso},
		{"ignition", "remove", "-o", "", iso},
		{"network", "embed", "-k", key, "-o", "", iso},
		{"network", "remove", "--output=", iso},
		{"kargs", "modify", "-a", "x", "-o", "", iso},
		{"kargs", "reset", "-o", "", iso},
		{"reset", "-o", "", iso},
		{"build", "--iso", iso, "--ignition", cfg, "--installation-disk", "/dev/sda", "-o", ""},
		{"minimal", iso, ""},
		{"minimal", "--output-rootfs", "", iso, filepath.Join(dir, "min.iso")},
		{"machineconfig", "--role", "master", "-o", "", cfg},
		{"pxe", "extract", "-o", "", iso},
		{"pxe", "ignition", "wrap", "-i", cfg, "-o", ""},
		{"pxe", "build", "--iso", iso, "--ignition", cfg, "-o", ""},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			r := snoIn(t, dir, nil, args...)
			wantFailure(t, r, "empty")
			if r.code != 2 {
				t.Errorf("exit code %d, want 2 (usage error)", r.code)
			}
			if fileSHA(t, iso) != before {
				t.Fatal("the input ISO changed")
			}
			if got := dirEntries(t, dir); strings.Join(got, " ") != strings.Join(entries, " ") {
				t.Errorf("files now %v, were %v", got, entries)
			}
		})
	}
}
