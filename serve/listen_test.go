package serve

import (
	"net/http"
	"testing"
	"time"
)

// TestMemoryReleasedWhenConnectionsAreGone: the memory a burst of connections left free is
// returned once the last of them closes, not while any is open.
func TestMemoryReleasedWhenConnectionsAreGone(t *testing.T) {
	freed := make(chan struct{}, 4)
	limit := &connLimit{max: 10}
	release := &memoryRelease{free: func() { freed <- struct{}{} }, open: limit.open.Load}
	limit.idle = release.idle

	limit.track(nil, http.StateNew)
	limit.track(nil, http.StateNew)
	limit.track(nil, http.StateClosed)
	select {
	case <-freed:
		t.Fatal("memory released while a connection is open")
	default:
	}
	limit.track(nil, http.StateClosed)
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not released after the last connection closed")
	}

	// A connection back before the release's turn: no release then.
	limit.track(nil, http.StateNew)
	release.run()
	select {
	case <-freed:
		t.Fatal("memory released while a connection is open")
	default:
	}
}
