package redfish

import (
	"testing"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// After the install the media are gone and an override the BMC kept (Continuous, as
// sushy-tools makes it) is cleared, on every profile; a second run changes nothing.
func TestEjectAfterInstall(t *testing.T) {
	for _, p := range redfishtest.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			bmc := startBMC(t, redfishtest.Config{Profile: p})
			var events eventLog
			c := newClient(t, bmc, &events, nil)
			ctx := testContext(t)
			res, err := c.Boot(ctx, BootRequest{Image: testImage, Wait: true})
			if err != nil {
				t.Fatalf("Boot: %v\n%s", err, events.text())
			}
			sys, err := c.findSystem(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			target, _ := cdTarget(sys.Boot.AllowedTargets)
			if err := c.patch(ctx, bootSettingsPath(sys), map[string]any{"Boot": map[string]any{
				"BootSourceOverrideTarget": target, "BootSourceOverrideEnabled": "Continuous"}}); err != nil {
				t.Fatalf("setting a Continuous override: %v", err)
			}
			done, err := c.EjectAfterInstall(ctx, "")
			if err != nil {
				t.Fatalf("EjectAfterInstall: %v\n%s", err, events.text())
			}
			slot := bmc.Resource(res.Slot)
			boot := bmc.Resource(bmc.SystemPath())["Boot"].(map[string]any)
			if len(done.Eject.Ejected) != 1 || !done.OverrideCleared || slot["Inserted"] == true || boot["BootSourceOverrideEnabled"] != "Disabled" {
				t.Errorf("result %+v: slot inserted %v, override %v", done, slot["Inserted"], boot["BootSourceOverrideEnabled"])
			}
			again, err := c.EjectAfterInstall(ctx, "")
			pending := sys.Settings != nil // cleared again: its pending state is not shown
			if err != nil || again.OverrideCleared != pending || again.Eject.Changed {
				t.Errorf("second run: %+v %v", again, err)
			}
		})
	}
}
