package serve

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// A token whose slash is percent-encoded (/TOKEN%2Fa.iso) is hidden in the access log too,
// text or JSON.
func TestEncodedSlashTokenNeverLogged(t *testing.T) {
	var jsonLog bytes.Buffer
	for _, logger := range []*slog.Logger{nil, slog.New(slog.NewJSONHandler(&jsonLog, nil))} {
		h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.Logger = logger })
		token := capability.Token(h.srv.publishedSecret().Key, "a")
		h.doRaw(http.MethodGet, "/"+token+"%2Fa.iso")
		h.doRaw(http.MethodGet, "/"+token+"%2fa%2Fboot.ipxe")
		log := h.log.String() + jsonLog.String()
		if strings.Contains(log, token) || strings.Contains(log, token[:20]) {
			t.Errorf("the log holds the token:\n%s", log)
		}
		if !strings.Contains(log, "/{token}/a.iso") {
			t.Errorf("the log does not name the node's file:\n%s", log)
		}
	}
}

// Clients without a token reading the public rootfs.img cannot take the places of the
// capability URLs: the two have places of their own.
func TestPublicFilesDoNotTakeCapabilitySlots(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.MaxConcurrent = 2 })
	// Two slow readers of /rootfs.img hold every public place.
	for range 2 {
		release, err := h.srv.takeSlot(publicClass)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	if resp, _ := h.get("/" + isobuilder.PXERootfs); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third public reader: %d, want 503", resp.StatusCode)
	}
	if resp, _ := h.get("/a.iso"); resp.StatusCode != http.StatusOK {
		t.Errorf("a capability URL while the public places are taken: %d, want 200", resp.StatusCode)
	}
}
