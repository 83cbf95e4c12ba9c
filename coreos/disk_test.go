package coreos

import (
	"strings"
	"testing"
)

func TestValidateDisk(t *testing.T) {
	for _, c := range []struct {
		disk    string
		warns   bool
		wantErr string
	}{
		{"/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", false, ""},
		{"/dev/disk/by-path/pci-0000:00:17.0-ata-1", false, ""},
		{"/dev/disk/by-id/nvme-eui.0025388b91b1e8a2", false, ""},
		{"/dev/sda", true, ""},
		{"/dev/nvme0n1", true, ""},
		{"/dev/vda", true, ""},
		{"/dev/xvdb", true, ""},
		{"/dev/mmcblk0", true, ""},
		{"/dev/sda1", false, ""},
		{"", false, "empty"},
		{"sda", false, "not an absolute path"},
		{"dev/sda", false, "not an absolute path"},
		{"/tmp/disk.img", false, "not under /dev"},
		{"/dev/", false, "not under /dev"},
		{"/dev/../etc/passwd", false, "not a clean path"},
		{"/dev/sd'a", false, `character '\''`},
		{"/dev/sda\nreboot", false, `character '\n'`},
		{"/dev/sda rm", false, `character ' '`},
		{"/dev/$(reboot)", false, `character '$'`},
		{"/dev/`reboot`", false, "character '`'"},
		{`/dev/sd\a`, false, `character '\\'`},
		{"/dev/sda;reboot", false, `character ';'`},
		{`/dev/"sda"`, false, `character '"'`},
		{"/dev/disk/by-id/" + strings.Repeat("x", 4095-len("/dev/disk/by-id/")), false, ""},
		{"/dev/disk/by-id/" + strings.Repeat("x", 4096-len("/dev/disk/by-id/")), false, "4096 bytes long, more than the 4095"},
		{"/dev/disk/by-id/" + strings.Repeat("x", 5000), false, "5016 bytes long"},
	} {
		warnings, err := ValidateDisk(c.disk)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: error %v, want one containing %q", c.disk, err, c.wantErr)
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: %v", c.disk, err)
		case c.warns != (len(warnings) == 1):
			t.Errorf("%q: warnings %q", c.disk, warnings)
		case c.warns && !strings.Contains(warnings[0], "/dev/disk/by-id or /dev/disk/by-path"):
			t.Errorf("%q: warning %q does not suggest a stable name", c.disk, warnings[0])
		}
	}
}
