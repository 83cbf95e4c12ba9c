package origin

import (
	"container/list"
	"sync"
)

// blockCache keeps the most recently used blocks; concurrent readers of a missing block
// wait for one fetch.
type blockCache struct {
	mu     sync.Mutex
	max    int
	lru    list.List // of *block, most recent first
	blocks map[int64]*list.Element
}

type block struct {
	idx   int64
	ready chan struct{} // closed once data or err is set
	data  []byte
	err   error
}

func newBlockCache(max int) *blockCache {
	return &blockCache{max: max, blocks: map[int64]*list.Element{}}
}

// get returns block idx, fetching it on a miss. A failed fetch is not kept: the next reader
// tries again.
func (c *blockCache) get(idx int64, fetch func(int64) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if e, ok := c.blocks[idx]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		b := e.Value.(*block)
		<-b.ready
		return b.data, b.err
	}
	b := &block{idx: idx, ready: make(chan struct{})}
	e := c.insertLocked(b)
	c.mu.Unlock()

	b.data, b.err = fetch(idx)
	close(b.ready)
	if b.err != nil {
		c.mu.Lock()
		if c.blocks[idx] == e {
			c.lru.Remove(e)
			delete(c.blocks, idx)
		}
		c.mu.Unlock()
	}
	return b.data, b.err
}

// put stores a block read some other way.
func (c *blockCache) put(idx int64, data []byte) {
	b := &block{idx: idx, ready: make(chan struct{}), data: data}
	close(b.ready)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.blocks[idx]; !ok {
		c.insertLocked(b)
	}
}

func (c *blockCache) insertLocked(b *block) *list.Element {
	e := c.lru.PushFront(b)
	c.blocks[b.idx] = e
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.blocks, old.Value.(*block).idx)
	}
	return e
}

func (c *blockCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
