package redfish

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Power states as Redfish names them.
const (
	PowerOn          = "On"
	PowerOff         = "Off"
	PowerPoweringOn  = "PoweringOn"
	PowerPoweringOff = "PoweringOff"
)

// defaultResetTypes is what a System that lists no allowed values is assumed to take.
var defaultResetTypes = []string{"On", "ForceOff", "ForceRestart"}

// resetTypes returns the System's allowed ResetType values, from the action or its
// ActionInfo.
func (c *Client) resetTypes(ctx context.Context, sys *System) ([]string, error) {
	a := sys.Actions.Reset
	if a == nil || a.Target == "" {
		return nil, fmt.Errorf("system %s has no #ComputerSystem.Reset action", sys.Path)
	}
	if len(a.Allowed) > 0 {
		return a.Allowed, nil
	}
	if a.ActionInfo != "" {
		var info actionInfo
		if err := c.get(ctx, a.ActionInfo, &info); err != nil {
			return nil, err
		}
		for _, p := range info.Parameters {
			if p.Name == "ResetType" && len(p.AllowableValues) > 0 {
				return p.AllowableValues, nil
			}
		}
	}
	return defaultResetTypes, nil
}

func (c *Client) reset(ctx context.Context, sys *System, resetType string) error {
	c.progress(StepPower, "reset %s: %s", sys.ID, resetType)
	return c.post(ctx, sys.Actions.Reset.Target, map[string]string{"ResetType": resetType})
}

// powerOnOrRestart powers the System on, or restarts it when it is on, so that it boots the
// override; it returns what it did.
func (c *Client) powerOnOrRestart(ctx context.Context, sys *System) (string, error) {
	allowed, err := c.resetTypes(ctx, sys)
	if err != nil {
		return "", err
	}
	pick := func(choices ...string) string {
		for _, t := range choices {
			if slices.Contains(allowed, t) {
				return t
			}
		}
		return ""
	}
	if sys.PowerState == PowerPoweringOff {
		if err := c.waitPower(ctx, sys, PowerOff); err != nil {
			return "", err
		}
	}
	if sys.PowerState == PowerOn || sys.PowerState == PowerPoweringOn {
		if t := pick("ForceRestart", "PowerCycle"); t != "" {
			return t, c.reset(ctx, sys, t)
		}
		off := pick("ForceOff", "GracefulShutdown")
		if off == "" {
			return "", fmt.Errorf("system %s is on and allows no restart or power-off (reset types: %s)", sys.ID, strings.Join(allowed, ", "))
		}
		if err := c.reset(ctx, sys, off); err != nil {
			return "", err
		}
		if err := c.waitPower(ctx, sys, PowerOff); err != nil {
			return "", err
		}
	}
	on := pick("On", "ForceOn", "PushPowerButton")
	if on == "" {
		return "", fmt.Errorf("system %s allows no power-on (reset types: %s)", sys.ID, strings.Join(allowed, ", "))
	}
	return on, c.reset(ctx, sys, on)
}

// waitPower reads the System until its PowerState is want or the context ends.
func (c *Client) waitPower(ctx context.Context, sys *System, want string) error {
	for {
		if err := c.refresh(ctx, sys); err != nil {
			return err
		}
		if sys.PowerState == want {
			c.progress(StepPower, "power %s", want)
			return nil
		}
		if err := c.sleep(ctx, c.opts.Retry.Poll); err != nil {
			return fmt.Errorf("waiting for system %s to be %s (it is %s): %w", sys.ID, want, orUnknown(sys.PowerState), err)
		}
	}
}
