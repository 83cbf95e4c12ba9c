package redfish

import (
	"testing"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// After the install the media are gone and an override the BMC kept (Continuous) no longer
// boots the CD, on every profile (sushy-tools keeps Continuous but points at the disk); a
// second run changes nothing.
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
			if len(done.Eject.Ejected) != 1 || !done.OverrideCleared || slot["Inserted"] == true || bootsCD(boot) {
				t.Errorf("result %+v: slot inserted %v, override %v", done, slot["Inserted"], boot)
			}
			again, err := c.EjectAfterInstall(ctx, "")
			// Cleared again where the state is not shown (a settings object) or never Disabled.
			repeats := sys.Settings != nil || p.ContinuousOverrides
			if err != nil || again.OverrideCleared != repeats || again.Eject.Changed {
				t.Errorf("second run: %+v %v", again, err)
			}
		})
	}
}

// bootsCD tells whether a System's Boot still sends the next boot to a virtual CD.
func bootsCD(boot map[string]any) bool {
	target := boot["BootSourceOverrideTarget"]
	return boot["BootSourceOverrideEnabled"] != "Disabled" && (target == "Cd" || target == "UsbCd")
}
