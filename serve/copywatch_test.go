package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// watchOften checks the origin of a version served from its copy every 20 ms.
func watchOften(c *testSetup) { c.originWatchEvery = 20 * time.Millisecond }

// waitMetric waits for series to read want in the server's /metrics, failing the test after
// a bound.
func (h *harness) waitMetric(series string, want float64) {
	h.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := h.metric(h.t.(*testing.T), series)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s is %v, want %v:\n%s", series, got, want, h.log.String())
		}
	}
}

// waitLogCount waits for the server's log to say want n times, failing the test after a bound.
func (h *harness) waitLogCount(want string, n int) {
	h.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); strings.Count(h.log.String(), want) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the log did not say %q %d times:\n%s", want, n, h.log.String())
		}
	}
}

// An object replaced at its origin while its copy is served, with nobody probing readiness:
// downloads alone end up with the new version, from its own copy.
func TestOriginCopyWatchReplaced(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, t.TempDir(), watchOften)
	h.waitLog("from the local copy")
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Fatalf("GET /a.iso from the copy: %d", resp.StatusCode)
	}

	h.iso = fixtures.File(t, "embed-areas-2021-12.iso")
	store.replace(t, h.iso, `"object-v2"`)
	want := h.want(configA)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, body := h.get("/a.iso"); resp.StatusCode == 200 && bytes.Equal(body, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("downloads never got the new version:\n%s", h.log.String())
		}
	}
	h.waitLogCount("from the local copy", 2)
}

// A store that holds its answers (packets dropped): a replica serving its copy answers its
// readiness probe at once, ready, while its watcher waits for the origin.
func TestOriginCopyReadyDoesNotWaitForOrigin(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, t.TempDir(), watchOften, func(c *testSetup) { c.Origin.IdleTimeout = 10 * time.Minute })
	h.srv.originCheckEvery = 0 // a probe that asked the origin would ask it now
	h.waitLog("from the local copy")
	gate, held := make(chan struct{}), make(chan struct{}, 1)
	t.Cleanup(func() { close(gate) }) // before the server closes
	store.objectStore.set(store.path, `"object-v1"`, func(w http.ResponseWriter, r *http.Request) {
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		http.Error(w, "late", http.StatusServiceUnavailable)
	})
	select {
	case <-held: // the watcher waits for the origin
	case <-time.After(30 * time.Second):
		t.Fatal("the origin was not asked whether the object changed")
	}
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Get(h.url + ReadyPath)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case code := <-answered:
		if code != 200 {
			t.Errorf("%s while the origin holds its answer: %d, want 200", ReadyPath, code)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s waits for an origin that holds its answer", ReadyPath)
	}
}

// An origin that refuses the checks of a version served from its copy (credentials
// refused): the replica stays ready, sno_iso_origin_check_ok says 0 and the log says so
// once; both say when the origin answers again.
func TestOriginCopyCheckFailsAlertably(t *testing.T) {
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, t.TempDir(), watchOften)
	h.waitLog("from the local copy")
	h.waitMetric("sno_iso_origin_check_ok", 1)

	store.objectStore.set(store.path, `"object-v1"`, originDown(http.StatusForbidden))
	h.waitMetric("sno_iso_origin_check_ok", 0)
	h.waitLog("403")
	if resp, body := h.get(ReadyPath); resp.StatusCode != 200 {
		t.Errorf("%s with the origin refusing and the copy complete: %d %s", ReadyPath, resp.StatusCode, body)
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("GET /a.iso with the origin refusing: %d", resp.StatusCode)
	}

	store.objectStore.set(store.path, `"object-v1"`, store.answer)
	h.waitMetric("sno_iso_origin_check_ok", 1)
	h.waitLog("the ISO's origin answers again")
	if n := strings.Count(h.log.String(), "serving the local copy of the version opened"); n != 1 {
		t.Errorf("the log says %d times that the origin refuses, want once:\n%s", n, h.log.String())
	}
}

// A copy that cannot start (here: no directory yet; in production, no room while a replaced
// version's copy is held) is tried again, and takes over once it can; the reason is logged
// once.
func TestOriginCopyRetried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "copies")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, dir)
	h.waitLog("not copying ")
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.waitLog("from the local copy")
	if n := strings.Count(h.log.String(), "not copying "); n != 1 {
		t.Errorf("the log says %d times why the copy could not start, want once:\n%s", n, h.log.String())
	}
	if !h.srv.servingCopy() {
		t.Error("the copy made on the second attempt is not served")
	}
}

// A copy in a tmpfs is memory: the log says so, and the copy is made all the same.
func TestOriginCopyTmpfs(t *testing.T) {
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil || !strings.Contains(string(mounts), " /dev/shm tmpfs ") {
		testenv.Missing(t, "no tmpfs at /dev/shm: %v", err)
	}
	dir, err := os.MkdirTemp("/dev/shm", "sno-iso-test-")
	if err != nil {
		testenv.Missing(t, "no writable /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	store := newCopyStore(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	h := copyHarness(t, store, dir)
	h.waitLog("from the local copy")
	if want := dir + " is a tmpfs: the copy takes 1048576 bytes of memory"; !strings.Contains(h.log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, h.log.String())
	}
}

// The room left beside a copy grows with the ISO: a grown ISO is as large as the ISO.
func TestCopyRoom(t *testing.T) {
	for size, want := range map[int64]int64{1 << 20: 64 << 20, 1200 << 20: 150 << 20} {
		if got := copyRoom(size); got != want {
			t.Errorf("copyRoom(%d) = %d, want %d", size, got, want)
		}
	}
}

// The expected case of a copy without room: a replaced version's copy is still held by a long
// download. The new version's copy is tried again, and takes over once that download ends.
func TestOriginCopyRetriedWhenRoomFreed(t *testing.T) {
	testenv.Root(t, "mounting a file system with room for one copy")
	v1, v2 := fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), fixtures.File(t, "embed-areas-2021-12.iso")
	// Room for one copy and its headroom, and half of another.
	dir, size := t.TempDir(), (fileLen(v1)+copyRoom(fileLen(v2))+fileLen(v2)/2)>>10
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dk", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a %d KiB tmpfs: %v %s", size, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	store := newCopyStore(t, v1)
	h := copyHarness(t, store, dir, watchOften)
	h.waitLog("from the local copy")
	held, err := h.srv.acquireISO() // what a long download of the first version holds
	if err != nil {
		t.Fatal(err)
	}

	store.replace(t, v2, `"object-v2"`)
	h.waitLog("bytes free, the copy needs")
	h.srv.releaseISO(held)
	h.waitLogCount("from the local copy", 2)
	h.iso = v2
	before := store.sent.Load()
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) || store.sent.Load() != before {
		t.Errorf("GET /a.iso once the new version's copy took over: %d, its bytes: %v, %d bytes from the origin", resp.StatusCode,
			bytes.Equal(body, h.want(configA)), store.sent.Load()-before)
	}
}
