package redfish

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// cdSlotOf names the slot each profile's BMC must be booted from.
var cdSlotOf = map[string]string{"idrac": "CD", "idrac10": "CD", "ilo": "2", "supermicro": "CD1", "xcc": "EXT1", "sushy-tools": "Cd"}

// Every vendor profile: boot from off, the fake ends powered on having booted the image
// once, a second run changes nothing, status reports it, eject empties the slot.
func TestBootEveryProfile(t *testing.T) {
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
			wantSlot := cdSlotOf[p.Name]
			if !strings.HasSuffix(res.Slot, "/"+wantSlot) || !res.Inserted || res.Reset != "On" || res.PowerState != "On" || !res.Changed {
				t.Errorf("result %+v: want slot %s, inserted, reset On, power On", res, wantSlot)
			}
			boots := bmc.Boots()
			if len(boots) != 1 || boots[0].Image != testImage {
				t.Fatalf("the fake booted %+v, want one boot of %s\n%s", boots, testImage, events.text())
			}
			slot := bmc.Resource(res.Slot)
			if slot["Image"] != testImage || slot["Inserted"] != true {
				t.Errorf("slot after boot: Image %v Inserted %v", slot["Image"], slot["Inserted"])
			}
			boot := bmc.Resource(bmc.SystemPath())["Boot"].(map[string]any)
			switch {
			case p.ContinuousOverrides:
				if boot["BootSourceOverrideEnabled"] != "Continuous" || !res.BootOverrideNotOnce ||
					!strings.Contains(events.text(), "boot-persists: the BMC keeps the boot override Cd Continuous") {
					t.Errorf("a BMC that keeps overrides Continuous: override %v, result %+v, events\n%s; want it said", boot, res, events.text())
				}
			case boot["BootSourceOverrideEnabled"] != "Disabled":
				t.Errorf("the one-time override was not spent by the boot: %v", boot)
			case res.BootOverrideNotOnce || strings.Contains(events.text(), "boot-persists"):
				t.Errorf("a Once override read back as not once: %+v\n%s", res, events.text())
			}
			for _, r := range bmc.Requests() {
				if r.Header.Get("Accept-Encoding") != "identity" || r.Header.Get("OData-Version") != "4.0" {
					t.Errorf("%s %s without Accept-Encoding: identity and OData-Version: 4.0", r.Method, r.Path)
				}
			}

			// Twice: nothing changes, nothing is sent but reads.
			before := len(bmc.Requests())
			again, err := c.Boot(ctx, BootRequest{Image: testImage, Wait: true})
			if err != nil {
				t.Fatalf("second Boot: %v", err)
			}
			if again.Changed || again.Inserted || again.Reset != "" {
				t.Errorf("second Boot changed something: %+v", again)
			}
			for _, r := range bmc.Requests()[before:] {
				if r.Method != "GET" {
					t.Errorf("second Boot sent %s %s", r.Method, r.Path)
				}
			}
			if !strings.Contains(events.text(), "nothing had to change") {
				t.Errorf("second Boot did not say that nothing had to change:\n%s", events.text())
			}

			st, err := c.Status(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range st.Media {
				if m.ID == wantSlot {
					found = m.Inserted && m.Image == testImage
				}
			}
			if st.PowerState != "On" || !found {
				js, _ := json.Marshal(st)
				t.Errorf("status %s: want power On and %s in slot %s", js, testImage, wantSlot)
			}

			ej, err := c.Eject(ctx, "", "")
			if err != nil {
				t.Fatalf("Eject: %v\n%s", err, events.text())
			}
			if len(ej.Ejected) != 1 || !strings.HasSuffix(ej.Ejected[0], "/"+wantSlot) {
				t.Errorf("Eject emptied %v, want slot %s", ej.Ejected, wantSlot)
			}
			if slot := bmc.Resource(res.Slot); slot["Inserted"] != false || (slot["ConnectedVia"] != "NotConnected" && !p.SlotEmptyAsStrings) {
				t.Errorf("slot after eject: %v", slot)
			}
			if again, err := c.Eject(ctx, "", ""); err != nil || again.Changed {
				t.Errorf("second Eject: %+v, %v; want no change", again, err)
			}
		})
	}
}

// What each vendor needs to see on the wire.
func TestVendorRequests(t *testing.T) {
	boot := func(t *testing.T, p redfishtest.Profile, cfg redfishtest.Config) *redfishtest.BMC {
		cfg.Profile = p
		bmc := startBMC(t, cfg)
		var events eventLog
		if _, err := newClient(t, bmc, &events, nil).Boot(testContext(t), BootRequest{Image: testImage, Mode: ModeUEFI}); err != nil {
			t.Fatalf("Boot: %v\n%s", err, events.text())
		}
		return bmc
	}
	t.Run("supermicro: no Inserted/WriteProtected, TransferProtocolType added, UsbCd with Enabled", func(t *testing.T) {
		bmc := boot(t, redfishtest.Supermicro(), redfishtest.Config{})
		inserts := requestsTo(bmc, "POST", "VirtualMedia.InsertMedia")
		if len(inserts) != 2 {
			t.Fatalf("%d inserts, want 2 (plain, then with TransferProtocolType)", len(inserts))
		}
		for _, r := range inserts {
			if strings.Contains(string(r.Body), "Inserted") || strings.Contains(string(r.Body), "WriteProtected") {
				t.Errorf("insert body %s carries Inserted or WriteProtected", r.Body)
			}
		}
		if !strings.Contains(string(inserts[1].Body), `"TransferProtocolType":"HTTP"`) {
			t.Errorf("second insert %s lacks TransferProtocolType HTTP", inserts[1].Body)
		}
		patches := requestsTo(bmc, "PATCH", "/Systems/1")
		if len(patches) != 1 || !strings.Contains(string(patches[0].Body), `"BootSourceOverrideTarget":"UsbCd"`) || !strings.Contains(string(patches[0].Body), `"BootSourceOverrideEnabled":"Once"`) {
			t.Errorf("boot PATCHes %v, want one with UsbCd and Once", bodies(patches))
		}
	})
	t.Run("ilo: CD is slot 2, trailing-slash targets, no Mode when it is already UEFI, busy retried", func(t *testing.T) {
		bmc := boot(t, redfishtest.ILO(), redfishtest.Config{})
		if n := len(requestsTo(bmc, "POST", "/2/Actions/VirtualMedia.InsertMedia")); n != 2 {
			t.Errorf("%d inserts into slot 2, want 2 (busy, then accepted)", n)
		}
		for _, r := range requestsTo(bmc, "PATCH", "/Systems/1") {
			if strings.Contains(string(r.Body), "BootSourceOverrideMode") {
				t.Errorf("boot PATCH %s carries the Mode the System already has", r.Body)
			}
		}
	})
	t.Run("xcc: RDOC slots skipped, ladder to UserName/Password none", func(t *testing.T) {
		bmc := boot(t, redfishtest.LenovoXCC(), redfishtest.Config{})
		inserts := requestsTo(bmc, "POST", "/EXT1/Actions/VirtualMedia.InsertMedia")
		if len(inserts) != 4 || !strings.Contains(string(inserts[3].Body), `"TransferMethod":"Stream"`) || !strings.Contains(string(inserts[3].Body), `"UserName":"none"`) {
			t.Errorf("EXT1 inserts %v: want the four rungs of the ladder", bodies(inserts))
		}
	})
	t.Run("idrac10: Boot through the settings object, 409 after power-off retried", func(t *testing.T) {
		p := redfishtest.IDRAC10()
		bmc := boot(t, p, redfishtest.Config{PowerOn: true})
		if n := len(requestsTo(bmc, "PATCH", "/Settings")); n != 1 {
			t.Errorf("%d PATCHes of the settings object, want 1", n)
		}
		if n := len(requestsTo(bmc, "PATCH", "/Systems/System.Embedded.1")); n != 0 {
			t.Errorf("%d PATCHes of the System itself, want 0", n)
		}
		resets := requestsTo(bmc, "POST", "ComputerSystem.Reset")
		if len(resets) != 1 || !strings.Contains(string(resets[0].Body), "ForceRestart") {
			t.Errorf("resets %v, want one ForceRestart of the running System", bodies(resets))
		}
	})
	t.Run("idrac: eject body is {}", func(t *testing.T) {
		p := redfishtest.IDRAC()
		p.Slots[1].Image = "http://old.example/old.iso"
		bmc := boot(t, p, redfishtest.Config{})
		// The first is refused as busy (SYS518) and sent again.
		ejects := requestsTo(bmc, "POST", "VirtualMedia.EjectMedia")
		if len(ejects) != 2 || string(ejects[0].Body) != "{}" || string(ejects[1].Body) != "{}" {
			t.Errorf("ejects %v, want two with body {}", bodies(ejects))
		}
	})
	t.Run("slots without actions: PATCH with If-Match, to insert and to eject", func(t *testing.T) {
		p := redfishtest.SushyTools()
		p.Slots[0].NoActions, p.Slots[0].Image = true, "http://old.example/old.iso"
		bmc := boot(t, p, redfishtest.Config{})
		patches := requestsTo(bmc, "PATCH", "/VirtualMedia/Cd")
		if len(patches) != 2 || !strings.Contains(string(patches[0].Body), `"Image":null`) || !strings.Contains(string(patches[1].Body), `"Inserted":true`) {
			t.Fatalf("slot PATCHes %v, want an eject then an insert", bodies(patches))
		}
		for _, r := range patches {
			if r.Header.Get("If-Match") == "" {
				t.Errorf("PATCH %s without If-Match", r.Body)
			}
		}
	})
	t.Run("a system still powering on into the image is not restarted", func(t *testing.T) {
		bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools(), PowerDelay: time.Minute})
		c := newClient(t, bmc, nil, nil)
		if _, err := c.Boot(testContext(t), BootRequest{Image: testImage}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Boot(testContext(t), BootRequest{Image: testImage})
		if err != nil || res.Changed || res.PowerState != "PoweringOn" {
			t.Errorf("second Boot while powering on: %+v, %v; want no change", res, err)
		}
		if n := len(requestsTo(bmc, "POST", "ComputerSystem.Reset")); n != 1 {
			t.Errorf("%d resets, want 1", n)
		}
	})
	t.Run("legacy mode is sent when asked and different", func(t *testing.T) {
		p := redfishtest.SushyTools()
		p.ContinuousOverrides = false
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		if _, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage, Mode: ModeLegacy, NoPower: true}); err != nil {
			t.Fatal(err)
		}
		boot := bmc.Resource(bmc.SystemPath())["Boot"].(map[string]any)
		if boot["BootSourceOverrideMode"] != "Legacy" || boot["BootSourceOverrideEnabled"] != "Once" || boot["BootSourceOverrideTarget"] != "Cd" {
			t.Errorf("boot override %v, want Cd once in Legacy", boot)
		}
		if bmc.PowerState() != "Off" || len(requestsTo(bmc, "POST", "ComputerSystem.Reset")) != 0 {
			t.Errorf("NoPower: power %s after %d resets", bmc.PowerState(), len(requestsTo(bmc, "POST", "ComputerSystem.Reset")))
		}
	})
}

func bodies(rs []redfishtest.Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Body))
	}
	return out
}

// Protocol options of any BMC: strict and weak ETags, task monitors, session expiry.
func TestProtocolBehaviours(t *testing.T) {
	t.Run("weak ETags refused by a strict BMC: retried strong", func(t *testing.T) {
		p := redfishtest.SushyTools()
		p.WeakETags, p.StrictETags = true, true
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		if _, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage}); err != nil {
			t.Fatal(err)
		}
		patches := requestsTo(bmc, "PATCH", bmc.SystemPath())
		if len(patches) != 2 || !strings.HasPrefix(patches[0].Header.Get("If-Match"), `W/"`) || !strings.HasPrefix(patches[1].Header.Get("If-Match"), `"`) {
			t.Errorf("PATCH If-Match headers %v, want a weak one refused then the strong one", ifMatches(patches))
		}
	})
	t.Run("an ETag stale by the time of the PATCH: sent again without If-Match", func(t *testing.T) {
		p := redfishtest.SushyTools()
		p.DriftingETags = true
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		if _, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage}); err != nil {
			t.Fatal(err)
		}
		patches := requestsTo(bmc, "PATCH", bmc.SystemPath())
		if got := ifMatches(patches); len(got) != 2 || got[0] == "" || got[1] != "" {
			t.Errorf("PATCH If-Match headers %q, want a stale one refused, then none", got)
		}
		if boot := bmc.Resource(bmc.SystemPath())["Boot"].(map[string]any); boot["BootSourceOverrideTarget"] != "Cd" {
			t.Errorf("boot override %v after the retry", boot)
		}
	})
	t.Run("task monitor", func(t *testing.T) {
		p := redfishtest.ILO()
		p.TaskMonitor, p.TaskPolls = true, 3
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		res, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage, Wait: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.PowerState != "On" || len(requestsTo(bmc, "GET", "")) == 0 {
			t.Errorf("result %+v", res)
		}
		var polls int
		for _, r := range bmc.Requests() {
			if strings.Contains(r.Path, "/TaskMonitors/") {
				polls++
			}
		}
		// insert (busy, then accepted), reset: 2 tasks × (3 polls + the result).
		if polls != 8 {
			t.Errorf("%d task monitor polls, want 8", polls)
		}
	})
	t.Run("session expiry: one new login, the request again", func(t *testing.T) {
		p := redfishtest.SushyTools()
		p.NoSessions, p.SessionExpiresAfter = false, 4
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		var events eventLog
		c := newClient(t, bmc, &events, nil)
		if _, err := c.Boot(testContext(t), BootRequest{Image: testImage, Wait: true}); err != nil {
			t.Fatalf("%v\n%s", err, events.text())
		}
		logins := requestsTo(bmc, "POST", "/SessionService/Sessions")
		if len(logins) < 2 {
			t.Errorf("%d logins, want the session renewed after it expired", len(logins))
		}
		if err := c.Close(testContext(t)); err != nil {
			t.Fatal(err)
		}
		if n := bmc.OpenSessions(); n != 0 {
			t.Errorf("%d sessions left open after Close", n)
		}
	})
	t.Run("sessions and Basic never leak the password into the trace", func(t *testing.T) {
		for _, p := range []redfishtest.Profile{redfishtest.IDRAC(), redfishtest.SushyTools()} {
			bmc := startBMC(t, redfishtest.Config{Profile: p})
			var trace strings.Builder
			c := newClient(t, bmc, nil, &trace)
			if _, err := c.Status(testContext(t), ""); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(trace.String(), testPassword) || strings.Contains(trace.String(), "token-") {
				t.Errorf("%s: the trace shows a secret:\n%s", p.Name, trace.String())
			}
			if !strings.Contains(trace.String(), "<redacted>") || !strings.Contains(trace.String(), "> GET ") {
				t.Errorf("%s: the trace lacks requests or redactions:\n%s", p.Name, trace.String())
			}
		}
	})
}

func ifMatches(rs []redfishtest.Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Header.Get("If-Match"))
	}
	return out
}

// The DMTF mockups: PATCH-only slots under the System, Manager-placed slots with
// unconventional action targets, and the older Manager tree.
func TestMockups(t *testing.T) {
	for _, tc := range []struct {
		name, slot string
		patch      bool
	}{
		{"public-rackmount1", "/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1", true},
		{"public-telemetry", "/redfish/v1/Managers/1/VirtualMedia/CD1", false},
		{"public-acd", "/redfish/v1/Managers/BMC/VirtualMedia/CD1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmc := startBMC(t, redfishtest.Config{Mockup: redfishtest.MockupDir(t, tc.name), PowerDelay: time.Millisecond})
			var events eventLog
			res, err := newClient(t, bmc, &events, nil).Boot(testContext(t), BootRequest{Image: testImage, Wait: true})
			if err != nil {
				t.Fatalf("Boot: %v\n%s", err, events.text())
			}
			if res.Slot != tc.slot || res.Ejected == "" || res.Reset != "ForceRestart" {
				t.Errorf("result %+v: want slot %s, the mockup's image ejected, ForceRestart", res, tc.slot)
			}
			if got := len(requestsTo(bmc, "PATCH", tc.slot)); (got == 2) != tc.patch {
				t.Errorf("%d PATCHes of the slot; PATCH-only slot: %v", got, tc.patch)
			}
			if len(bmc.Boots()) != 1 {
				t.Errorf("boots %+v, want one\n%s", bmc.Boots(), events.text())
			}
		})
	}
}
