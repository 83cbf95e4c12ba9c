package coreos

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// pathMax is Linux's PATH_MAX, which counts the terminating NUL: no device path is longer.
const pathMax = 4096

// kernelDiskName matches the names the kernel gives disks in probe order, which can change
// between boots and when controllers or disks are added.
var kernelDiskName = regexp.MustCompile(`^/dev/(?:[shv]d[a-z]+|xvd[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+|dasd[a-z]+)$`)

// ValidateDisk checks an installation disk path. It must be an absolute, clean path under
// /dev made only of [A-Za-z0-9/._:+@-]: the path is written into the install-to-disk
// shell script, where a quote, a space, `$`, a backtick, a backslash or a `;` would break
// the script or run something else. The warnings are advice: a kernel
// name such as /dev/sda can point at another disk on the next boot.
func ValidateDisk(disk string) (warnings []string, err error) {
	if disk == "" {
		return nil, fmt.Errorf("installation disk is empty")
	}
	if len(disk) >= pathMax {
		return nil, fmt.Errorf("installation disk path is %d bytes long, more than the %d a Linux path can have: "+
			"give the device path, e.g. /dev/disk/by-id/...",
			len(disk), pathMax-1)
	}
	for i, r := range disk {
		if !diskPathChar(r) {
			return nil, fmt.Errorf("installation disk %q: character %q at offset %d is not allowed "+
				"(allowed: letters, digits and / . _ : + @ -)", disk, r, i)
		}
	}
	if !strings.HasPrefix(disk, "/") {
		return nil, fmt.Errorf("installation disk %q is not an absolute path: give the device path, e.g. /dev/disk/by-id/...", disk)
	}
	if !strings.HasPrefix(disk, "/dev/") || len(disk) == len("/dev/") {
		return nil, fmt.Errorf("installation disk %q is not under /dev: give a block device such as /dev/disk/by-id/...", disk)
	}
	if path.Clean(disk) != disk {
		return nil, fmt.Errorf("installation disk %q is not a clean path: use %q", disk, path.Clean(disk))
	}
	if kernelDiskName.MatchString(disk) {
		warnings = append(warnings, fmt.Sprintf("installation disk %s is a kernel name, which can point at another disk "+
			"after a reboot or a hardware change; prefer a stable name from /dev/disk/by-id or /dev/disk/by-path", disk))
	}
	return warnings, nil
}

func diskPathChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("/._:+@-", r)
}
