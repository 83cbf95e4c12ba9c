package redfish

import (
	"context"
	"slices"
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
// whatever the BMC did with "Once" (some keep it; sushy-tools makes every override
// Continuous and ignores Disabled, so there the target goes back to the disk, Hdd).
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
	// A System with a settings object may hold a pending override the System does not show
	// yet: it is cleared whatever the System says.
	pending := sys.Settings != nil && sys.Settings.SettingsObject.ID != ""
	if !pending && (sys.Boot.Enabled == "" || sys.Boot.Enabled == "Disabled") {
		c.progress(StepBoot, "no boot override to clear")
		return res, nil
	}
	// Target and Enabled together: some BMCs refuse one without the other.
	boot := map[string]any{"BootSourceOverrideTarget": noOverrideTarget(sys.Boot), "BootSourceOverrideEnabled": "Disabled"}
	if err := c.patch(ctx, bootSettingsPath(sys), map[string]any{"Boot": boot}); err != nil {
		return res, err
	}
	c.progress(StepBoot, "boot override cleared")
	res.OverrideCleared = true
	return res, nil
}

// bootSettingsPath is where the System's Boot is written: its settings object when it has
// one, else the System.
func bootSettingsPath(sys *System) string {
	if sys.Settings != nil && sys.Settings.SettingsObject.ID != "" {
		return strings.TrimRight(sys.Settings.SettingsObject.ID, "/")
	}
	return sys.Path
}

// noOverrideTarget is the target that boots the System as if no override were set: None
// where the BMC allows it (or lists nothing), else the disk, else the target as it is.
func noOverrideTarget(b BootState) string {
	allowed := func(t string) bool { return len(b.AllowedTargets) == 0 || slices.Contains(b.AllowedTargets, t) }
	switch {
	case allowed("None"):
		return "None"
	case allowed("Hdd"):
		return "Hdd"
	}
	return b.Target
}
