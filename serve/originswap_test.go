package serve

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// gatedResponse stops after left body bytes, flushed, until gate is closed: the origin is
// in the middle of a span when the test replaces the object.
type gatedResponse struct {
	http.ResponseWriter
	left    int
	gate    chan struct{}
	stopped chan struct{}
	once    sync.Once
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
		<-w.gate
		m, err := w.ResponseWriter.Write(p[n:])
		return n + m, err
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
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
		f, err := os.Open(oldPath)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		w.Header().Set("ETag", `"object-v1"`)
		gw := &gatedResponse{ResponseWriter: w, left: 64 << 10, gate: gate, stopped: stopped}
		http.ServeContent(gw, r, "", time.Time{}, f)
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
