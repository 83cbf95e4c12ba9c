package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/origin"
)

// metricValue returns the value of the sample line that starts with series in a /metrics
// body; -1 when there is none.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

func TestHealthReadyAndMetrics(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	var observed atomic.Int64
	h := newHarness(t, store.path, map[string]string{"a": configA, "b": "broken config"}, func(c *testSetup) {
		c.ISO = store.url()
		// The caller's observer is told too, next to the metrics.
		c.Origin = origin.Options{Observe: func(int64, error) { observed.Add(1) }}
	})
	for _, p := range []string{HealthPath, ReadyPath} {
		if resp, body := h.get(p); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	_, full := h.get("/a.iso")
	h.get("/a.iso", "Range: bytes=0-99")
	h.get("/b.iso")
	h.get("/nothing.iso")
	resp, metrics := h.get(MetricsPath)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", MetricsPath, resp.StatusCode)
	}
	body := string(metrics)
	for series, want := range map[string]float64{
		`sno_iso_http_requests_total{code="200",route="iso"}`:      1,
		`sno_iso_http_requests_total{code="206",route="iso"}`:      1,
		`sno_iso_http_requests_total{code="500",route="iso"}`:      1,
		`sno_iso_http_requests_total{code="404",route="iso"}`:      1,
		`sno_iso_http_request_duration_seconds_count{route="iso"}`: 4,
		`sno_iso_http_requests_in_flight`:                          0,
		`sno_iso_node_preparations_total`:                          2,
		`sno_iso_node_preparation_failures_total`:                  1,
		`sno_iso_origin_errors_total`:                              0,
	} {
		if got := metricValue(t, body, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if got := metricValue(t, body, `sno_iso_http_response_bytes_total{route="iso"}`); got < float64(len(full)+100) {
		t.Errorf("bytes sent %v, want at least %d", got, len(full)+100)
	}
	if got := metricValue(t, body, "sno_iso_origin_requests_total"); got < 2 || got != float64(observed.Load()) {
		t.Errorf("origin requests %v, the caller's observer saw %d", got, observed.Load())
	}
	if got := metricValue(t, body, "sno_iso_origin_bytes_total"); got < float64(store.sent.Load()) {
		t.Errorf("origin bytes %v, the origin sent %d", got, store.sent.Load())
	}
	if !strings.Contains(body, "process_resident_memory_bytes") {
		t.Error("no process metrics")
	}
	if strings.Contains(body, `route="a`) || strings.Contains(body, "nothing") {
		t.Error("node names became label values")
	}

	// The nodes directory gone: not ready, with the reason.
	os.RemoveAll(h.nodes)
	if resp, body := h.get(ReadyPath); resp.StatusCode != 503 || !strings.Contains(string(body), "listing the nodes") {
		t.Errorf("%s without the nodes directory: %d %s", ReadyPath, resp.StatusCode, body)
	}
}

func TestSeparateAdmin(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.SeparateAdmin = true })
	if resp, _ := h.get(MetricsPath); resp.StatusCode != 404 {
		t.Errorf("%s on the main handler with SeparateAdmin: %d", MetricsPath, resp.StatusCode)
	}
	admin := httptest.NewServer(h.srv.Admin())
	defer admin.Close()
	h.url = admin.URL
	for _, p := range []string{HealthPath, ReadyPath, MetricsPath} {
		if resp, _ := h.get(p); resp.StatusCode != 200 {
			t.Errorf("%s on the admin handler: %d", p, resp.StatusCode)
		}
	}
}

func TestRouteOf(t *testing.T) {
	for path, want := range map[string]string{
		"/": "index", "/rootfs.img": "rootfs", "/a.iso": "iso", "/a-minimal.iso": "minimal_iso",
		"/tok/a.iso": "iso", "/a/vmlinuz": "pxe_vmlinuz", "/a/initrd.img": "pxe_initrd", "/a/rootfs.img": "pxe_rootfs",
		"/a/boot.ipxe": "pxe_boot", "/healthz": "admin", "/x": "other",
	} {
		if got := routeOf(path); got != want {
			t.Errorf("routeOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestReadyFollowsTheOrigin: /readyz asks the origin, so a replica whose origin is down, or
// whose origin now holds a version that cannot be served, leaves the load balancer.
func TestReadyFollowsTheOrigin(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := newObjectStore(t, iso)
	h := newHarness(t, iso, map[string]string{"a": configA}, func(c *testSetup) { c.ISO = store.url() })
	h.srv.originCheckEvery = 0 // every probe asks the origin
	ready := func(wantStatus int, want string) {
		t.Helper()
		resp, body := h.get(ReadyPath)
		if resp.StatusCode != wantStatus || !strings.Contains(string(body), want) || strings.Contains(string(body), "TOPSECRET") {
			t.Errorf("%s: %d %q, want %d with %q", ReadyPath, resp.StatusCode, body, wantStatus, want)
		}
	}
	ready(200, "ready")

	store.set(iso, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	ready(503, "the ISO's origin does not answer")

	// A new version that is not a live ISO: it cannot be served.
	garbage := filepath.Join(t.TempDir(), "garbage.iso")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	store.set(garbage, `"object-v2"`, nil)
	h.waitReason("changed at its origin and the new version cannot be served")
	// Meanwhile the nodes' media are 503 with Retry-After, not 500 or 502.
	if resp, body := h.get("/a.iso"); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("/a.iso while the origin's new version cannot be served: %d %s", resp.StatusCode, body)
	}

	// A live ISO replaces it: opened in the background, served, and ready again.
	store.set(fixtures.File(t, "embed-areas-2021-12.iso"), `"object-v3"`, nil)
	h.waitReady()
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 {
		t.Errorf("/a.iso after the origin's new version: %d %s", resp.StatusCode, body)
	}
	if n := strings.Count(h.log.String(), "not ready: the ISO changed at its origin"); n != 1 {
		t.Errorf("the reason was logged %d times, want once:\n%s", n, h.log.String())
	}
}
