package server

import (
	"context"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// sizedCache is a graphql.Cache bounded by the total length of its keys
// and values' sources (weigh) as well as by count: a few huge queries
// cannot fill memory the way a count-only LRU lets them. Entries over
// maxEntry are not cached at all.
type sizedCache[V any] struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[string, V]
	weigh    func(key string, v V) int
	total    int
	maxTotal int
	maxEntry int
}

func newSizedCache[V any](count, maxTotal, maxEntry int, weigh func(string, V) int) *sizedCache[V] {
	c := &sizedCache[V]{weigh: weigh, maxTotal: maxTotal, maxEntry: maxEntry}
	c.lru, _ = simplelru.NewLRU[string, V](count, func(k string, v V) { c.total -= c.weigh(k, v) })
	return c
}

// Get implements graphql.Cache.
func (c *sizedCache[V]) Get(_ context.Context, key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(key)
}

// Add implements graphql.Cache.
func (c *sizedCache[V]) Add(_ context.Context, key string, v V) {
	w := c.weigh(key, v)
	if w > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(key) {
		return
	}
	c.lru.Add(key, v)
	c.total += w
	for c.total > c.maxTotal {
		c.lru.RemoveOldest()
	}
}
