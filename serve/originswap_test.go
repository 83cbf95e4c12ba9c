package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/origin"
)

// gatedResponse stops after left body bytes, flushed, until gate is closed: the origin is
// in the middle of a span when the test replaces the object.
type gatedResponse struct {
	http.ResponseWriter
	left    int
	gate    chan struct{}
	stopped chan struct{}
	once    sync.Once
	// ctx, when set, is the request's: its end ends the wait. abort cuts the body off at the
	// gate, as a store whose connection breaks.
	ctx   context.Context
	abort bool
}

func (w *gatedResponse) Write(p []byte) (int, error) {
	if w.left > 0 && len(p) >= w.left {
		n, err := w.ResponseWriter.Write(p[:w.left])
		w.left = 0
		if err != nil {
			return n, err
		}
		w.ResponseWriter.(http.Flusher).Flush()
		w.once.Do(func() { close(w.stopped) })
		if err := w.wait(); err != nil {
			return n, err
		}
		m, err := w.ResponseWriter.Write(p[n:])
		return n + m, err
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}

func (w *gatedResponse) wait() error {
	var done <-chan struct{}
	if w.ctx != nil {
		done = w.ctx.Done()
	}
	select {
	case <-w.gate:
	case <-done:
		return w.ctx.Err()
	}
	if w.abort {
		panic(http.ErrAbortHandler)
	}
	return nil
}

// An object replaced at the origin while a response from the old version is being sent:
// that response ends short (the client sees an incomplete body), its bytes all of the old
// version; the next request serves the new version whole.
func TestOriginReplacedMidResponse(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := originHarness(t, store, map[string]string{"a": configA})
	old := h.want(configA)
	h.get("/a.iso", "Range: bytes=0-0") // prepares the node

	gate, stopped := make(chan struct{}), make(chan struct{})
	oldPath := store.path
	store.set(oldPath, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		gw := &gatedResponse{ResponseWriter: w, left: 64 << 10, gate: gate, stopped: stopped}
		serveObjectFile(gw, r, oldPath, `"object-v1"`, time.Time{})
	})
	resp, err := http.Get(h.url + h.path("/a.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("before the change: %d", resp.StatusCode)
	}
	<-stopped
	newISO := fixtures.File(t, "embed-areas-2021-12.iso")
	store.set(newISO, `"object-v2"`, nil)
	close(gate)
	got, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || int64(len(got)) == resp.ContentLength {
		t.Errorf("the response under way read %d of %d bytes, error %v; want it cut short", len(got), resp.ContentLength, err)
	}
	if !bytes.HasPrefix(old, got) {
		t.Errorf("the response under way holds bytes that are not the old version's")
	}

	h.iso = newISO
	next, body := h.get("/a.iso")
	if next.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || next.Header.Get("ETag") == resp.Header.Get("ETag") {
		t.Errorf("after the change: %d, ETag %s (was %s)", next.StatusCode, next.Header.Get("ETag"), resp.Header.Get("ETag"))
	}
}

// An object replaced at the origin whose new version does not answer: the server does not
// wait on the origin while it opens it. /healthz and /readyz (503 with the reason) and the
// nodes' media (503 with Retry-After) answer while the origin is still silent, and the server
// serves the new version once the origin answers.
func TestOriginReplacedThenSilent(t *testing.T) {
	store := newObjectStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := newHarness(t, store.path, map[string]string{"a": configA}, func(c *testSetup) {
		c.ISO = store.url()
		c.Origin = origin.Options{IdleTimeout: time.Hour} // the reopen stalls until released
	})
	h.srv.originCheckEvery = 0 // every probe asks the origin
	h.waitReady()

	newISO := fixtures.File(t, "embed-areas-2021-12.iso")
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	var asked atomic.Int32
	store.set(newISO, `"object-v2"`, func(w http.ResponseWriter, r *http.Request) {
		// The first request after the swap (the readiness probe's check) finds the new
		// version; the next ones, the opening of that version, stall until released.
		if asked.Add(1) > 1 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		serveObjectFile(w, r, newISO, `"object-v2"`, time.Time{})
	})

	// Every answer below comes while the origin is silent (released only after them); the
	// client's deadline only bounds a server that would wait on the origin.
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(h.url + path)
		if err != nil {
			t.Fatalf("GET %s while the origin's new version is silent: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, body := get(ReadyPath)
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "changed at its origin; opening the new version") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said the ISO is being opened again; last: %d %s", ReadyPath, resp.StatusCode, body)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); asked.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the new version is not being opened (%d requests to the origin)", asked.Load())
		}
	}
	if resp, body := get(HealthPath); resp.StatusCode != http.StatusOK {
		t.Errorf("%s while the origin is silent: %d %s", HealthPath, resp.StatusCode, body)
	}
	if resp, body := get(ReadyPath); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "opening the new version") {
		t.Errorf("%s while the origin is silent: %d %s", ReadyPath, resp.StatusCode, body)
	}
	if resp, body := get(h.path("/a.iso")); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("/a.iso while the origin is silent: %d, Retry-After %q (%s)", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	select {
	case <-release:
		t.Fatal("the origin was released before the answers above")
	default:
	}

	once.Do(func() { close(release) })
	h.waitReady()
	h.iso = newISO
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("/a.iso once the origin answers: %d, the new version's bytes: %v", resp.StatusCode, bytes.Equal(body, h.want(configA)))
	}
}
