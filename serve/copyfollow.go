package serve

import (
	"context"
	"os"
	"sync"
	"time"
)

// Until the local copy of an ISO read from its origin is complete, responses follow it as it
// grows: bytes the copy has written are sent from its file, bytes just past them wait for the
// copy to write them. The store is then read once per version, by the copy, instead of once
// more per download begun before the copy took over. The copy's bytes are the pinned
// version's (each span is asked for with its validator), so no response mixes versions.
const (
	// followWindow is how far past the copy's written bytes a response waits for it: the copy
	// reaches them within a span or two. Bytes farther on stream from the origin.
	followWindow = 2 * copySpanSize
)

// localCopy is the local copy of an origin's object: its file, how much of it is written, in
// order from byte 0, and whether the copy ended. Its file stays open while anyone holds it:
// the copy while it runs, the version being copied until the copy ends short or the version
// closes, each response that reads it (bodyWriter.followed), and the version read from the
// complete copy. The bytes written stay good when the copy ends short: they are the pinned
// version's, as the origin would send them.
type localCopy struct {
	file *sourceFile // its f is the *os.File; its info and procPath let requests sendfile from it
	size int64
	// idle is how long a response waits for the copy to advance before it treats the copy
	// as stalled and reads the origin, as it would give up on an origin that stalls.
	idle time.Duration

	mu       sync.Mutex
	written  int64         // the bytes before it are written
	advanced chan struct{} // closed, and replaced, when written grows or the copy ends
	ended    bool
	complete bool // the copy ended with every byte written and checked
	refs     int
}

// newLocalCopy holds f, size bytes long, for the copy that writes it.
func newLocalCopy(f *os.File, size int64, idle time.Duration) (*localCopy, error) {
	file, err := newSourceFile(f, "")
	if err != nil {
		return nil, err
	}
	return &localCopy{file: file, size: size, idle: idle, advanced: make(chan struct{}), refs: 1}, nil
}

// advance says the bytes before written are in the file.
func (c *localCopy) advance(written int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = written
	close(c.advanced)
	c.advanced = make(chan struct{})
}

// end says the copy stopped: complete when it takes over, else responses read the origin for
// what they still have to send.
func (c *localCopy) end(complete bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended, c.complete = true, complete
	close(c.advanced)
	c.advanced = make(chan struct{})
}

// hold keeps the file open until the matching release.
func (c *localCopy) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs++
}

// tryHold is hold for a reader that found c through its version, which lets go of it when the
// copy ends short: false when the file is closed already.
func (c *localCopy) tryHold() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == 0 {
		return false
	}
	c.refs++
	return true
}

// release closes the file once nobody holds it any more.
func (c *localCopy) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs--; c.refs == 0 {
		c.file.f.(*os.File).Close()
	}
}

// available is how many bytes at off the file can give now (0: none yet), whether it is
// worth waiting for them, and what closes when that may change.
func (c *localCopy) available(off int64) (n int64, wait bool, advanced <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.complete:
		return c.size - off, false, nil
	case off < c.written:
		return c.written - off, false, nil
	case c.ended:
		return 0, false, nil
	}
	return 0, off < c.written+followWindow, c.advanced
}

// await returns how many bytes at off the file can give, once it can give some; 0 when they
// are the origin's to send: too far past the copy, the copy ended without them, or it wrote
// nothing for idle. It fails only when ctx ends.
func (c *localCopy) await(ctx context.Context, off int64) (int64, error) {
	var stalled *time.Timer
	for {
		n, wait, advanced := c.available(off)
		if n > 0 || !wait {
			return n, nil
		}
		if stalled == nil {
			stalled = time.NewTimer(c.idle)
			defer stalled.Stop()
		}
		select {
		case <-advanced:
			stalled.Reset(c.idle)
		case <-stalled.C:
			return 0, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// followed is the copy under way this response reads from, held until close: the one its
// version publishes now, else the one it held before (ended short, its written bytes still
// good); nil when there is none.
func (bw *bodyWriter) followed() *localCopy {
	if c := bw.file.local.Load(); c != nil && c != bw.follow && c.tryHold() {
		if bw.follow != nil {
			bw.follow.release()
		}
		bw.follow = c
	}
	return bw.follow
}

// followCopy sends what it can of the n bytes at off from the copy c as it grows, and returns
// how many it sent: the rest is the origin's to send.
func (bw *bodyWriter) followCopy(c *localCopy, off, n int64) (int64, error) {
	var sent int64
	for sent < n {
		k, err := c.await(bw.ctx, off+sent)
		if err != nil || k == 0 {
			return sent, err
		}
		k = min(k, n-sent)
		if err := bw.copyFrom(c.file, off+sent, k); err != nil {
			return sent, err
		}
		sent += k
	}
	return sent, nil
}
