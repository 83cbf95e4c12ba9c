package redfish

import (
	"context"
	"strings"
)

// AfterInstallResult is what EjectAfterInstall did.
type AfterInstallResult struct {
	Eject *EjectResult `json:"eject"`
	// OverrideCleared is false when no boot override was left to clear.
	OverrideCleared bool `json:"overrideCleared"`
}

// EjectAfterInstall takes the install media away once a node has written its disk: it ejects
// every CD/DVD slot and clears the boot override, so that the next boot is from the disk
// whatever the BMC did with "Once" (some keep it, sushy-tools makes it Continuous).
func (c *Client) EjectAfterInstall(ctx context.Context, system string) (*AfterInstallResult, error) {
	ejected, err := c.Eject(ctx, system, "")
	res := &AfterInstallResult{Eject: ejected}
	if err != nil {
		return res, err
	}
	sys, err := c.findSystem(ctx, system)
	if err != nil {
		return res, err
	}
	if sys.Boot.Enabled == "" || sys.Boot.Enabled == "Disabled" {
		c.progress(StepBoot, "no boot override to clear")
		return res, nil
	}
	where := sys.Path
	if sys.Settings != nil && sys.Settings.SettingsObject.ID != "" {
		where = strings.TrimRight(sys.Settings.SettingsObject.ID, "/")
	}
	// Target and Enabled together: some BMCs refuse one without the other.
	boot := map[string]any{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"}
	if err := c.patch(ctx, where, map[string]any{"Boot": boot}); err != nil {
		return res, err
	}
	c.progress(StepBoot, "boot override cleared")
	res.OverrideCleared = true
	return res, nil
}
