package serve

import (
	"sync"
	"sync/atomic"
)

// nodeCache holds each node's latest preparation, by name: the one place where prepared
// nodes are kept, found, replaced and dropped, so that a bound on what it keeps (by count or
// bytes) would be enforced here alone. It is safe for concurrent use.
type nodeCache struct {
	mu      sync.Mutex
	entries map[string]*nodeEntry
}

// nodeEntry holds the latest preparation of one node, and the one in progress: concurrent
// requests for a changed node wait for one preparation instead of each running their own.
type nodeEntry struct {
	mu        sync.Mutex
	cur       atomic.Pointer[nodeState]
	preparing *preparation // guarded by mu; nil when none is in progress
}

// entry returns the node's entry, adding an empty one when the node has none.
func (c *nodeCache) entry(name string) *nodeEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[name]
	if e == nil {
		if c.entries == nil {
			c.entries = map[string]*nodeEntry{}
		}
		e = &nodeEntry{}
		c.entries[name] = e
	}
	return e
}

// get returns the node's latest preparation; nil when it has none.
func (c *nodeCache) get(name string) *nodeState {
	c.mu.Lock()
	e := c.entries[name]
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.cur.Load()
}

// put makes ns the latest preparation of the node whose entry is e, ending the preparation in
// progress, and retires the one it replaces.
func (c *nodeCache) put(e *nodeEntry, ns *nodeState) { c.putFrom(e, nil, ns) }

// putFrom puts ns, the result of the preparation p (nil: whichever), unless p was left behind
// as stuck and another preparation replaced it: then ns is retired, and false returned.
func (c *nodeCache) putFrom(e *nodeEntry, p *preparation, ns *nodeState) bool {
	e.mu.Lock()
	if p != nil && e.preparing != p {
		e.mu.Unlock()
		ns.retire()
		return false
	}
	old := e.cur.Swap(ns)
	e.preparing = nil
	e.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return true
}

// retain drops and retires the nodes for which keep is false (removed from the nodes
// directory).
func (c *nodeCache) retain(keep func(name string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, e := range c.entries {
		if !keep(name) {
			if ns := e.cur.Load(); ns != nil {
				ns.retire()
			}
			delete(c.entries, name)
		}
	}
}

// retireAll retires every node's preparation, when the server closes.
func (c *nodeCache) retireAll() {
	c.retain(func(string) bool { return false })
}
