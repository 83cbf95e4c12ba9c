package serve

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Once the server is closing, a request that outlived the shutdown's grace starts no more
// background work (Close may already be waiting for the last of it), and gets an error.
func TestFlightRefusedOnceClosing(t *testing.T) {
	var wg sync.WaitGroup
	closing := false
	track := func() (func(), bool) {
		if closing {
			return nil, false
		}
		wg.Add(1)
		return wg.Done, true
	}
	var fs flights[int]
	if v, err := fs.join("a", track, func() (int, error) { return 1, nil }, nil).wait(context.Background()); v != 1 || err != nil {
		t.Fatalf("before closing: %v, %v", v, err)
	}
	wg.Wait()
	closing = true
	ran := false
	_, err := fs.join("b", track, func() (int, error) { ran = true; return 2, nil }, nil).wait(context.Background())
	if !errors.Is(err, errServerClosed) || ran {
		t.Errorf("while closing: %v (produced: %v), want errServerClosed and nothing started", err, ran)
	}
}
