package serve

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/origin"
)

// waitReady probes /readyz until it answers 200, failing the test after a bound; it returns
// the bodies of the 503 answers seen before.
func (h *harness) waitReady() []string {
	h.t.Helper()
	var reasons []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, body := h.get(ReadyPath)
		if resp.StatusCode == http.StatusOK {
			return reasons
		}
		reasons = append(reasons, string(body))
	}
	h.t.Fatalf("%s never answered 200; last: %s\nlog:\n%s", ReadyPath, reasons[len(reasons)-1], h.log.String())
	return nil
}

// waitReason probes /readyz until its 503 body contains want, failing the test after a bound.
func (h *harness) waitReason(want string) string {
	h.t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, body := h.get(ReadyPath)
		if last = string(body); resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(last, want) {
			return last
		}
	}
	h.t.Fatalf("%s never said %q; last: %s", ReadyPath, want, last)
	return ""
}

// checkNotServing checks what a server whose origin has not answered says: alive, not
// ready with reason, and 503 with Retry-After for a node's media, never a secret.
func (h *harness) checkNotServing(reason string) {
	h.t.Helper()
	if resp, body := h.get(HealthPath); resp.StatusCode != http.StatusOK {
		h.t.Errorf("%s before the origin answers: %d %s", HealthPath, resp.StatusCode, body)
	}
	body := h.waitReason(reason)
	for _, p := range []string{"/a.iso", "/a/initrd.img", "/rootfs.img"} {
		resp, page := h.get(p)
		retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusServiceUnavailable || err != nil || retry < 1 {
			h.t.Errorf("GET %s before the origin answers: %d, Retry-After %q (%s)", p, resp.StatusCode, resp.Header.Get("Retry-After"), page)
		}
	}
	if strings.Contains(body+h.log.String(), "TOPSECRET") {
		h.t.Errorf("the pre-signed URL's signature was shown:\n%s\n%s", body, h.log.String())
	}
}

// originDown is an objectStore's answer while it is made to fail at start.
func originDown(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", status) }
}

// An origin that refuses connections at start: serve starts, alive and not ready with the
// reason (logged once, however many attempts and probes), and becomes ready when the origin
// listens, serving the same bytes as ever.
func TestOriginRefusingAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	h := newHarness(t, iso, map[string]string{"a": configA}, func(c *testSetup) {
		c.ISO = "http://" + addr + "/bucket/rhcos-live.iso?X-Amz-Signature=TOPSECRET"
		c.Origin = origin.Options{IdleTimeout: 2 * time.Second}
	})
	h.checkNotServing("connection refused")
	h.waitReason("(attempt 2 failed")

	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	newObjectStoreOn(t, iso, ln)
	h.waitReady()
	if resp, body := h.get("/a.iso"); resp.StatusCode != http.StatusOK || string(body) != string(h.want(configA)) {
		t.Errorf("once the origin answers: %d, %d bytes that are not the built ISO", resp.StatusCode, len(body))
	}
	log := h.log.String()
	if n := strings.Count(log, "connection refused; trying again"); n != 1 {
		t.Errorf("the reason was logged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(log, "ready: http://"+addr+"/bucket/rhcos-live.iso answers now") {
		t.Errorf("the log does not say the server became ready:\n%s", log)
	}
}

// An origin answering 500 at start, then 206: ready when it recovers. An origin serving a
// customized ISO is not ready either, and says why in /readyz and the log.
func TestOriginFailingThenAnswering(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := newObjectStore(t, iso)
	store.set(iso, `"object-v1"`, originDown(http.StatusInternalServerError))
	h := originHarness(t, store, map[string]string{"a": configA})
	h.checkNotServing("500")

	customizedISO := buildExpected(t, iso, configA)
	store.set(customizedISO, `"object-v2"`, nil)
	h.checkNotServing("embedded customizations")
	if !strings.Contains(h.log.String(), "embedded customizations") {
		t.Errorf("the log does not say the origin's ISO is customized:\n%s", h.log.String())
	}

	store.set(iso, `"object-v3"`, nil)
	h.waitReady()
	if resp, body := h.get("/a.iso"); resp.StatusCode != http.StatusOK || string(body) != string(h.want(configA)) {
		t.Errorf("once the origin answers: %d, %d bytes that are not the built ISO", resp.StatusCode, len(body))
	}
}

// An origin that accepts and then says nothing: New returns once the attempt times out (the
// origin's idle timeout), requests get 503 rather than hanging, and the server becomes ready
// when the origin answers.
func TestOriginSilentAtStart(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := newObjectStore(t, iso)
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	store.set(iso, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	h := newHarness(t, iso, map[string]string{"a": configA}, func(c *testSetup) {
		c.ISO = store.url()
		c.Origin = origin.Options{IdleTimeout: 200 * time.Millisecond}
	})
	h.checkNotServing("did not answer within 200ms")
	store.set(iso, `"object-v1"`, nil)
	close(release)
	h.waitReady()
	if resp, _ := h.get("/a.iso", "Range: bytes=0-99"); resp.StatusCode != http.StatusPartialContent {
		t.Errorf("once the origin answers: %d", resp.StatusCode)
	}
}
