package redfishtest

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// allowedResets are the ResetType values the System lists, inline or in its ActionInfo.
func (b *BMC) allowedResets(system string) []any {
	acts, _ := b.tree[system]["Actions"].(resource)
	reset, _ := acts["#ComputerSystem.Reset"].(resource)
	if v, ok := reset["ResetType@Redfish.AllowableValues"].([]any); ok {
		return v
	}
	info, _ := reset["@Redfish.ActionInfo"].(string)
	params, _ := b.tree[strings.TrimRight(info, "/")]["Parameters"].([]any)
	for _, p := range params {
		if m, ok := p.(resource); ok && m["Name"] == "ResetType" {
			v, _ := m["AllowableValues"].([]any)
			return v
		}
	}
	return toAny(standardResetTypes)
}

func (b *BMC) reset(system string, args map[string]any) (int, resource) {
	resetType, _ := args["ResetType"].(string)
	if !slices.Contains(b.allowedResets(system), any(resetType)) {
		return http.StatusBadRequest, b.errorBody("Base.1.8.ActionParameterValueNotInList",
			"The value "+resetType+" for the parameter ResetType is not in the list of acceptable values.", "#/ResetType")
	}
	sys := b.tree[system]
	state, _ := sys["PowerState"].(string)
	switch resetType {
	case "On", "ForceOn":
		if state != "On" {
			b.transition(system, "PoweringOn", "On")
		}
	case "ForceOff", "GracefulShutdown":
		if state != "Off" {
			b.transition(system, "PoweringOff", "Off")
		}
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		if state == "On" {
			b.transition(system, "PoweringOn", "On")
		}
	case "PushPowerButton":
		if state == "On" {
			b.transition(system, "PoweringOff", "Off")
		} else {
			b.transition(system, "PoweringOn", "On")
		}
	}
	if resetType != "On" && resetType != "ForceOn" {
		b.conflicts = b.cfg.Profile.ConflictsAfterPowerOff
	}
	return 0, nil
}

// transition sets the passing state now and the final one after PowerDelay; reaching On
// boots the System.
func (b *BMC) transition(system, passing, final string) {
	b.tree[system]["PowerState"] = passing
	finish := func() {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return
		}
		b.tree[system]["PowerState"] = final
		var boot *Boot
		if final == "On" {
			boot = b.powerOnBoot(system)
		}
		b.mu.Unlock()
		if boot != nil && b.cfg.OnBoot != nil {
			b.cfg.OnBoot(*boot)
		}
	}
	if b.cfg.PowerDelay <= 0 {
		// Called with the lock held: finish once it is released.
		go finish()
		return
	}
	b.timers = append(b.timers, time.AfterFunc(b.cfg.PowerDelay, finish))
}

// powerOnBoot applies pending settings and a boot override: a virtual CD target with an
// inserted CD boots it, and a Once override is then spent.
func (b *BMC) powerOnBoot(system string) *Boot {
	sysBoot, _ := b.tree[system]["Boot"].(resource)
	if settings := b.tree[system+"/Settings"]; settings != nil {
		pending, _ := settings["Boot"].(resource)
		for k, v := range pending {
			sysBoot[k] = v
		}
		settings["Boot"] = resource{}
	}
	enabled, _ := sysBoot["BootSourceOverrideEnabled"].(string)
	target, _ := sysBoot["BootSourceOverrideTarget"].(string)
	if enabled == "Once" {
		sysBoot["BootSourceOverrideEnabled"] = "Disabled"
	}
	if enabled == "Disabled" || enabled == "" || (target != "Cd" && target != "UsbCd") {
		return nil
	}
	for path, r := range b.tree {
		types, _ := r["MediaTypes"].([]any)
		inserted, _ := r["Inserted"].(bool)
		if inserted && (slices.Contains(types, any("CD")) || slices.Contains(types, any("DVD"))) {
			image, _ := r["Image"].(string)
			boot := Boot{Image: image, File: b.fetched[path]}
			b.boots = append(b.boots, boot)
			return &boot
		}
	}
	return nil
}

// PowerState is the (first) System's power state now.
func (b *BMC) PowerState() string {
	state, _ := b.Resource(b.SystemPath())["PowerState"].(string)
	return state
}
