package serve

import (
	"bytes"
	"sync"
	"testing"
)

// Many first requests at once for a node's minimal ISO make it once and all get its bytes.
func TestMinimalMadeOnceForConcurrentRequests(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) {
		c.BaseURL = "http://192.0.2.1:8080"
	})
	const clients = 40
	bodies := make([][]byte, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := h.get("/a-minimal.iso")
			if resp.StatusCode != 200 {
				t.Errorf("client %d: %d %s", i, resp.StatusCode, body)
			}
			bodies[i] = body
		}()
	}
	wg.Wait()
	for i := range bodies {
		if !bytes.Equal(bodies[i], bodies[0]) {
			t.Fatalf("client %d got %d bytes, client 0 %d: not the same minimal ISO", i, len(bodies[i]), len(bodies[0]))
		}
	}
	_, metrics := h.get(MetricsPath)
	if made := metricValue(t, string(metrics), `sno_iso_node_media_made_total{kind="minimal"}`); made != 1 {
		t.Errorf("%v minimal ISOs made for %d concurrent requests, want 1", made, clients)
	}
}
