package coreos

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DiskSetting is the name of the installation disk setting, in sno.yaml and install-config
// alike; warnings about the disk carry it as their Path.
const DiskSetting = "installationDisk"

// DefaultRebootDelay is the installer's delay between the end of coreos-installer and the
// reboot into the installed disk (`shutdown -r +1`).
const DefaultRebootDelay = time.Minute

// Installation is what install-to-disk does on the live system: where coreos-installer
// writes the node and with which options. It is the `coreOSInstallation` section of
// sno.yaml (alias `bootstrapInPlace`, the install-config name).
type Installation struct {
	// Disk is the target device, an absolute path under /dev (`installationDisk`).
	Disk string
	// CopyNetwork passes --copy-network so the live system's NetworkManager keyfiles
	// (static IPs) carry over to the installed system (`copyNetwork`).
	CopyNetwork bool
	// AppendKargs and DeleteKargs are kernel arguments added to or removed from the
	// installed system, one argument per entry (`appendKargs`, `deleteKargs`).
	AppendKargs []string
	DeleteKargs []string
	// WipeDisk releases LVM, md-RAID and device-mapper holders of the target disk and
	// wipes its signatures before installing (`wipeDisk`): the cure for coreos-installer's
	// "found busy partitions".
	WipeDisk bool
	// RebootDelay is the time between the end of the install and the reboot, a whole
	// number of minutes (`rebootDelay`); nil means DefaultRebootDelay.
	RebootDelay *time.Duration
	// PreInstall and PostInstall are executables on the live system that install-to-disk runs,
	// in order, before the disk is written and after it (before the reboot); a failure stops
	// the install. PrepareLiveIgnition sets them from LiveIgnitionOptions.
	PreInstall, PostInstall []string
}

// EffectiveRebootDelay is RebootDelay, or DefaultRebootDelay when it is not set.
func (inst Installation) EffectiveRebootDelay() time.Duration {
	if inst.RebootDelay == nil {
		return DefaultRebootDelay
	}
	return *inst.RebootDelay
}

// InstallationFlags are the command-line settings that override the file. A zero field
// (empty string, nil pointer, nil slice) leaves the file's value; a non-nil slice, even an
// empty one, replaces the file's list.
type InstallationFlags struct {
	Disk        string
	CopyNetwork *bool
	AppendKargs []string
	DeleteKargs []string
	WipeDisk    *bool
	RebootDelay *time.Duration
}

// Override returns inst with every field that the flags set replaced by the flag's value.
func (f InstallationFlags) Override(inst Installation) Installation {
	if f.Disk != "" {
		inst.Disk = f.Disk
	}
	if f.CopyNetwork != nil {
		inst.CopyNetwork = *f.CopyNetwork
	}
	if f.AppendKargs != nil {
		inst.AppendKargs = f.AppendKargs
	}
	if f.DeleteKargs != nil {
		inst.DeleteKargs = f.DeleteKargs
	}
	if f.WipeDisk != nil {
		inst.WipeDisk = *f.WipeDisk
	}
	if f.RebootDelay != nil {
		delay := *f.RebootDelay
		inst.RebootDelay = &delay
	}
	return inst
}

// ErrNoInstallationDisk says that no installation disk was set in any of the places that set
// one.
var ErrNoInstallationDisk = errors.New("no installation disk: set coreOSInstallation.installationDisk in sno.yaml, " +
	"bootstrapInPlace.installationDisk in install-config.yaml")

// Validate checks everything install-to-disk needs before it is rendered: a disk is set
// and safe to write into a shell script, the kargs are single arguments, the reboot delay
// can be scheduled. Warnings are advice (an unstable disk name), not failures.
func (inst Installation) Validate() (warnings []string, err error) {
	if inst.Disk == "" {
		return nil, ErrNoInstallationDisk
	}
	warnings, err = ValidateDisk(inst.Disk)
	if err != nil {
		return nil, err
	}
	for _, list := range []struct {
		key   string
		kargs []string
	}{{"appendKargs", inst.AppendKargs}, {"deleteKargs", inst.DeleteKargs}} {
		for i, karg := range list.kargs {
			if err := validateKarg(karg); err != nil {
				return nil, fmt.Errorf("%s[%d] %q: %w", list.key, i, karg, err)
			}
		}
	}
	if err := ValidateRebootDelay(inst.EffectiveRebootDelay()); err != nil {
		return nil, fmt.Errorf("rebootDelay %w", err)
	}
	for _, script := range append(slices.Clip(inst.PreInstall), inst.PostInstall...) {
		if !strings.HasPrefix(script, "/") || strings.ContainsAny(script, "\x00\n") {
			return nil, fmt.Errorf("install script %q is not an absolute path", script)
		}
	}
	return warnings, nil
}

// validateKarg accepts one kernel argument. Whitespace is allowed only inside double
// quotes (`foo="a b"`), as the kernel's own parser does, so that each entry stays one
// argument of coreos-installer.
func validateKarg(karg string) error {
	if karg == "" {
		return fmt.Errorf("empty kernel argument")
	}
	quoted := false
	for _, r := range karg {
		switch {
		case r == '"':
			quoted = !quoted
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("control character %q in a kernel argument", r)
		case (r == ' ' || r == '\t') && !quoted:
			return fmt.Errorf("space outside double quotes: give one kernel argument per entry")
		}
	}
	if quoted {
		return fmt.Errorf("unbalanced double quote")
	}
	return nil
}

// ValidateRebootDelay keeps the delay expressible as `shutdown -r +MINUTES`, which
// announces the reboot to logged-in users and can be cancelled with `shutdown -c`. The error
// is about the value; the caller names where it came from.
func ValidateRebootDelay(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s is negative", d)
	}
	if d%time.Minute != 0 {
		return fmt.Errorf("%s is not a whole number of minutes (the reboot is scheduled with shutdown -r +MINUTES); use e.g. %dm",
			d, (d+time.Minute-1)/time.Minute)
	}
	if d > 24*time.Hour {
		return fmt.Errorf("%s is longer than a day", d)
	}
	return nil
}
