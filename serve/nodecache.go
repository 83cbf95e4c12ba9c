package serve

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// nodeCache holds each node's latest preparation, by name: the one place where prepared
// nodes are kept, found, replaced and dropped. The preparations it keeps are bounded by
// bytes: past the budget, the least recently used are dropped, to be prepared again when
// asked for. It is safe for concurrent use.
type nodeCache struct {
	// budget bounds the bytes of the preparations kept (nodeState.memory); 0 is no bound.
	budget int64
	// observe, when set, hears of each use (hit: the preparation was fresh) and of the
	// bytes held after it.
	observe func(hit bool, bytes int64)

	mu      sync.Mutex
	entries map[string]*nodeEntry
	recent  list.List // of *nodeEntry holding a preparation, most recently used first
	used    int64     // bytes of the preparations in recent
}

// nodeEntry holds the latest preparation of one node, and the one in progress: concurrent
// requests for a changed node wait for one preparation instead of each running their own.
type nodeEntry struct {
	mu        sync.Mutex
	cur       atomic.Pointer[nodeState]
	preparing *preparation // guarded by mu; nil when none is in progress

	elem  *list.Element // in nodeCache.recent; guarded by nodeCache.mu
	bytes int64         // what cur was charged; guarded by nodeCache.mu
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

// use records that ns, the preparation in e, was just used (hit: it was fresh, no
// preparation was needed), charging its bytes, and drops the least recently used other
// preparations while the cache is over its budget.
func (c *nodeCache) use(e *nodeEntry, ns *nodeState, hit bool) {
	c.mu.Lock()
	if e.cur.Load() == ns {
		c.used += ns.memory() - e.bytes
		e.bytes = ns.memory()
		if e.elem == nil {
			e.elem = c.recent.PushFront(e)
		} else {
			c.recent.MoveToFront(e.elem)
		}
	}
	for c.budget > 0 && c.used > c.budget && c.recent.Back() != nil && c.recent.Back().Value != e {
		c.dropLocked(c.recent.Back().Value.(*nodeEntry))
	}
	used := c.used
	c.mu.Unlock()
	if c.observe != nil {
		c.observe(hit, used)
	}
}

// dropLocked forgets e's preparation (a request holding it finishes with it) and retires it.
func (c *nodeCache) dropLocked(e *nodeEntry) {
	c.recent.Remove(e.elem)
	c.used -= e.bytes
	e.elem, e.bytes = nil, 0
	if ns := e.cur.Swap(nil); ns != nil {
		ns.retire()
	}
}

// retain drops and retires the nodes for which keep is false (removed from the nodes
// directory).
func (c *nodeCache) retain(keep func(name string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, e := range c.entries {
		if !keep(name) {
			if e.elem != nil {
				c.dropLocked(e)
			} else if ns := e.cur.Load(); ns != nil {
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
