package redfish

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// clientOf is a client of a server that is not a fake BMC.
func clientOf(t *testing.T, url string) *Client {
	t.Helper()
	addr, err := ParseAddress(url)
	if err != nil {
		t.Fatal(err)
	}
	return New(addr, Options{Retry: fastRetry})
}

func TestNotRedfish(t *testing.T) {
	for _, tt := range []struct{ name, contentType, body, want string }{
		{"html", "text/html", "<html><body>Welcome to the router</body></html>", "HTML page"},
		{"nonsense json", "application/json", `{"Systems": 42}`, "cannot unmarshal"},
		{"json array", "application/json", `[1,2,3]`, "not a JSON object"},
		{"no Systems", "application/json", `{"Name": "a printer"}`, "lists no Systems"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := clientOf(t, redfishtest.Answering(t, tt.contentType, tt.body)).Status(testContext(t), "")
			if !errors.Is(err, ErrNotRedfish) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want ErrNotRedfish mentioning %q", err, tt.want)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	for _, p := range []redfishtest.Profile{redfishtest.IDRAC(), redfishtest.SushyTools()} {
		bmc := startBMC(t, redfishtest.Config{Profile: p})
		addr, _ := ParseAddress(bmc.URL())
		c := New(addr, Options{Credentials: Credentials{Username: testUser, Password: "wrong"}, Retry: fastRetry})
		_, err := c.Status(testContext(t), "")
		var refusal *Error
		if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &refusal) || refusal.StatusCode != 401 {
			t.Errorf("%s: %v; want a 401 that is ErrUnauthorized", p.Name, err)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s: the error shows the password: %v", p.Name, err)
		}
	}
}

func TestUnknownSystemAndSlot(t *testing.T) {
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.ILO()})
	c := newClient(t, bmc, nil, nil)
	ctx := testContext(t)
	_, err := c.Boot(ctx, BootRequest{Image: testImage, System: "7"})
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Kind != "system" || !strings.Contains(err.Error(), "/redfish/v1/Systems/1") {
		t.Errorf("unknown system: %v; want a NotFoundError listing /redfish/v1/Systems/1", err)
	}
	_, err = c.Boot(ctx, BootRequest{Image: testImage, System: "/redfish/v1/Systems/9"})
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "/redfish/v1/Systems/1") {
		t.Errorf("unknown system path: %v; want a NotFoundError listing /redfish/v1/Systems/1", err)
	}
	_, err = c.Boot(ctx, BootRequest{Image: testImage, Slot: "CD9"})
	if !errors.As(err, &nf) || nf.Kind != "virtual media slot" || !strings.Contains(err.Error(), "1, 2") {
		t.Errorf("unknown slot: %v; want a NotFoundError listing 1, 2", err)
	}
	if n := len(requestsTo(bmc, "POST", "InsertMedia")); n != 0 {
		t.Errorf("%d inserts after bad names", n)
	}
}

// Several Systems: none is guessed, the one named by Id or path is used.
func TestSeveralSystems(t *testing.T) {
	p := redfishtest.SushyTools()
	p.OtherSystems = []string{"blade-2", "blade-3"}
	bmc := startBMC(t, redfishtest.Config{Profile: p})
	c := newClient(t, bmc, nil, nil)
	_, err := c.Status(testContext(t), "")
	var ambiguous *AmbiguousSystemError
	if !errors.As(err, &ambiguous) || !strings.Contains(err.Error(), "/redfish/v1/Systems/blade-2, /redfish/v1/Systems/blade-3") {
		t.Errorf("got %v; want an AmbiguousSystemError listing the Systems", err)
	}
	for _, name := range []string{p.SystemID, bmc.SystemPath()} {
		st, err := c.Status(testContext(t), name)
		if err != nil || st.System != bmc.SystemPath() {
			t.Errorf("Status(%q) = %+v, %v; want %s", name, st, err, bmc.SystemPath())
		}
	}
}

func TestNoCDSlot(t *testing.T) {
	p := redfishtest.SushyTools()
	p.Slots = p.Slots[1:] // the floppy/USB only
	bmc := startBMC(t, redfishtest.Config{Profile: p})
	_, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage})
	if !errors.Is(err, ErrNoCDSlot) || !strings.Contains(err.Error(), "Floppy (Floppy/USBStick)") {
		t.Errorf("got %v; want ErrNoCDSlot listing the Floppy slot", err)
	}
}

// A URL the BMC refuses: the BMC's own message, and nothing inserted.
func TestRefusedImage(t *testing.T) {
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.IDRAC()})
	var events eventLog
	_, err := newClient(t, bmc, &events, nil).Boot(testContext(t), BootRequest{Image: "http://192.0.2.1/sno?node=1"})
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.StatusCode != 400 || !strings.Contains(err.Error(), "must end in .iso") || !strings.Contains(err.Error(), "RAC0720") {
		t.Errorf("got %v; want the BMC's RAC0720 message", err)
	}
	if !strings.Contains(events.text(), "warning: the image URL has a query string") || !strings.Contains(events.text(), "does not end in .iso") {
		t.Errorf("no warning before sending:\n%s", events.text())
	}
	if slot := bmc.Resource("/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD"); slot["Inserted"] != false {
		t.Errorf("slot after a refused insert: %v", slot)
	}
}

// An HTTPS URL to a BMC that cannot fetch one: warned about, then the BMC's refusal.
func TestRefusedHTTPSImage(t *testing.T) {
	bmc := startBMC(t, redfishtest.Config{Profile: redfishtest.LenovoXCC()})
	var events eventLog
	_, err := newClient(t, bmc, &events, nil).Boot(testContext(t), BootRequest{Image: "https://192.0.2.1/sno.iso"})
	if err == nil || !strings.Contains(err.Error(), "HTTPS images cannot be mounted") || !strings.Contains(events.text(), "warning: the image URL is HTTPS") {
		t.Errorf("got %v after\n%s; want a warning, then the BMC's refusal", err, events.text())
	}
}

// A boot that fails after the insert takes the image out again and says so.
func TestFailedBootEjectsAgain(t *testing.T) {
	p := redfishtest.SushyTools()
	p.BootTargets = []string{"Pxe", "Hdd"}
	bmc := startBMC(t, redfishtest.Config{Profile: p})
	_, err := newClient(t, bmc, nil, nil).Boot(testContext(t), BootRequest{Image: testImage})
	var incomplete *IncompleteError
	if !errors.As(err, &incomplete) || !incomplete.Ejected || !errors.Is(err, ErrNoCDBootTarget) {
		t.Fatalf("got %v; want an IncompleteError with the image ejected, caused by ErrNoCDBootTarget", err)
	}
	if !strings.Contains(err.Error(), "allows only Pxe, Hdd") || !strings.Contains(err.Error(), "ejected again") {
		t.Errorf("message %q", err)
	}
	if slot := bmc.Resource(bmc.SystemPath() + "/VirtualMedia/Cd"); slot["Inserted"] != false || slot["Image"] != "" {
		t.Errorf("slot after the failed boot: %v", slot)
	}
	if bmc.PowerState() != "Off" {
		t.Errorf("power %s after the failed boot", bmc.PowerState())
	}
}

// A BMC that never answers: the context's deadline ends the wait with a clear error.
func TestTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := clientOf(t, redfishtest.Unresponsive(t)).Status(ctx, "")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "GET /redfish/v1/") {
		t.Errorf("got %v; want the deadline, naming the request", err)
	}
}
