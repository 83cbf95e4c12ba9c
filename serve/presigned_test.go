package serve

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// A pre-signed ISO URL's expiry: a warning at start when it is within 2 days, the seconds left
// as a metric, and /readyz failing from 10 minutes before it, with the reason; the signature is
// never shown.
func TestPresignedURLExpiry(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	signedAt := time.Now().UTC().Truncate(time.Second)
	for _, tc := range []struct {
		name     string
		query    string
		lifetime time.Duration // from signedAt; 0: no expiry in the URL
		warn     string        // in the log; "" for none
		ready    string        // in /readyz's 503; "" for ready
	}{
		{"no expiry", "X-Amz-Signature=TOPSECRET", 0, "", ""},
		{"a week", "X-Amz-Date=" + signedAt.Format("20060102T150405Z") + "&X-Amz-Expires=604800&X-Amz-Signature=TOPSECRET",
			7 * 24 * time.Hour, "", ""},
		{"an hour", "X-Amz-Date=" + signedAt.Format("20060102T150405Z") + "&X-Amz-Expires=3600&X-Amz-Signature=TOPSECRET",
			time.Hour, "expires at " + signedAt.Add(time.Hour).Format(time.RFC3339), ""},
		{"5 minutes, GCS", "X-Goog-Date=" + signedAt.Format("20060102T150405Z") + "&X-Goog-Expires=300&X-Goog-Signature=TOPSECRET",
			5 * time.Minute, "expires at", "expires at " + signedAt.Add(5*time.Minute).Format(time.RFC3339)},
		{"expired, legacy", "Expires=" + itoa(signedAt.Add(-time.Hour).Unix()) + "&Signature=TOPSECRET",
			-time.Hour, "expired at", "expired at " + signedAt.Add(-time.Hour).Format(time.RFC3339)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newObjectStore(t, iso)
			store.query = tc.query
			h := originHarness(t, store, map[string]string{"a": configA})
			log := h.log.String()
			if tc.warn == "" && strings.Contains(log, "pre-signed") {
				t.Errorf("a warning for a URL that does not expire soon:\n%s", log)
			}
			if tc.warn != "" && (!strings.Contains(log, tc.warn) || !strings.Contains(log, "fresh URL") || !strings.Contains(log, "s3://")) {
				t.Errorf("the log does not warn %q and say what to do:\n%s", tc.warn, log)
			}
			resp, body := h.get(ReadyPath)
			if tc.ready == "" && resp.StatusCode != http.StatusOK || tc.ready != "" &&
				(resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), tc.ready)) {
				t.Errorf("%s: %d %s; want %q", ReadyPath, resp.StatusCode, body, tc.ready)
			}
			// The origin decides when the URL stops working; the server serves until then.
			if resp, _ := h.get("/a.iso", "Range: bytes=0-0"); resp.StatusCode != http.StatusPartialContent {
				t.Errorf("GET /a.iso: %d", resp.StatusCode)
			}
			_, metrics := h.get(MetricsPath)
			left := metricValue(t, string(metrics), "sno_iso_origin_url_expiry_seconds")
			if tc.lifetime == 0 && left != -1 {
				t.Errorf("an expiry metric %v for a URL without expiry", left)
			}
			if want := time.Until(signedAt.Add(tc.lifetime)).Seconds(); tc.lifetime != 0 && (left > want+1 || left < want-60) {
				t.Errorf("sno_iso_origin_url_expiry_seconds %v, want about %v", left, want)
			}
			if strings.Contains(h.log.String()+string(body)+string(metrics), "TOPSECRET") {
				t.Errorf("the signature was shown:\n%s\n%s", h.log.String(), body)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
