package redfish

import (
	"context"
	"fmt"
	"strings"
)

// Boot modes for SetBootOverride; "" leaves the System's mode alone.
const (
	ModeUEFI   = "UEFI"
	ModeLegacy = "Legacy"
)

// cdTarget chooses the override target for a virtual CD from the allowed values: the DMTF
// Cd, else Supermicro's UsbCd. With no list, Cd.
func cdTarget(allowed []string) (string, error) {
	if len(allowed) == 0 {
		return "Cd", nil
	}
	for _, want := range []string{"Cd", "UsbCd"} {
		for _, a := range allowed {
			if a == want {
				return want, nil
			}
		}
	}
	return "", fmt.Errorf("%w: system allows only %s", ErrNoCDBootTarget, strings.Join(allowed, ", "))
}

// setBootOnce sets a one-time boot from the virtual CD. Target and Enabled always go
// together; Mode only when asked for and different, as some BMCs refuse it otherwise. The
// values go to the System's settings object when it has one. It reports whether anything
// had to change.
func (c *Client) setBootOnce(ctx context.Context, sys *System, mode string) (bool, error) {
	target, err := cdTarget(sys.Boot.AllowedTargets)
	if err != nil {
		return false, err
	}
	boot := map[string]any{"BootSourceOverrideTarget": target, "BootSourceOverrideEnabled": "Once"}
	modeChange := mode != "" && !strings.EqualFold(mode, sys.Boot.Mode)
	if modeChange {
		boot["BootSourceOverrideMode"] = mode
	}
	if sys.Boot.Target == target && sys.Boot.Enabled == "Once" && !modeChange {
		c.progress(StepBoot, "boot override already %s once", target)
		return false, nil
	}
	where := bootSettingsPath(sys)
	if err := c.patch(ctx, where, map[string]any{"Boot": boot}); err != nil {
		return false, err
	}
	msg := fmt.Sprintf("boot override set: %s once", target)
	if modeChange {
		msg += " in " + mode + " mode"
	}
	if where != sys.Path {
		msg += " (pending in " + where + ")"
	}
	c.progress(StepBoot, "%s", msg)
	return true, nil
}
