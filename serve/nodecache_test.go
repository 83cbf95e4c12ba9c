package serve

import "testing"

// A preparation that replaces another retires it (its grown ISOs are closed once unused), and
// a node dropped from the cache is retired and no longer found.
func TestNodeCacheReplacesAndDrops(t *testing.T) {
	var c nodeCache
	if c.get("a") != nil {
		t.Fatal("an empty cache found node a")
	}
	first, second, other := &nodeState{name: "a"}, &nodeState{name: "a"}, &nodeState{name: "b"}
	c.put(c.entry("a"), first)
	c.put(c.entry("b"), other)
	if c.entry("a") != c.entry("a") || c.get("a") != first {
		t.Fatal("node a's entry or preparation is not kept")
	}
	c.put(c.entry("a"), second)
	if c.get("a") != second || !first.retired || second.retired {
		t.Errorf("after a new preparation: current %p (want %p), first retired %v, second retired %v",
			c.get("a"), second, first.retired, second.retired)
	}
	c.retain(func(name string) bool { return name == "b" })
	if c.get("a") != nil || !second.retired || c.get("b") != other || other.retired {
		t.Errorf("after node a was removed: a %v (retired %v), b %v (retired %v)", c.get("a"), second.retired, c.get("b"), other.retired)
	}
	c.retireAll()
	if c.get("b") != nil || !other.retired {
		t.Error("retireAll left node b")
	}
}
