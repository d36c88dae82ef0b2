package safety

import (
	"hash/fnv"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/weibohbase/gateway/weibo"
)

// verdicts remembers the HOME filters' verdicts on posts (HomeView.Home),
// by filter set and post: a post's text never changes, so the same live
// filters give it the same verdict, and a page read again (a refresh, a
// live watcher's poll of the newest posts) does not search its texts
// again. Bounded: verdictShards LRU lists of verdictsPerShard entries.
var verdicts = newVerdictCache()

const (
	verdictShards    = 16
	verdictsPerShard = 4096
)

// verdictKey names a verdict: the filter set (filterSetKey) and the post.
type verdictKey struct {
	filters uint64
	post    weibo.PostID
}

// verdict is what the filters said of a post; warn is shared (read-only).
type verdict struct {
	hide bool
	warn []FilterResult
}

type verdictCache struct {
	shards [verdictShards]struct {
		mu  sync.Mutex
		lru *simplelru.LRU[verdictKey, verdict]
		_   [40]byte // keeps shards on their own cache lines
	}
}

func newVerdictCache() *verdictCache {
	c := &verdictCache{}
	for i := range c.shards {
		c.shards[i].lru, _ = simplelru.NewLRU[verdictKey, verdict](verdictsPerShard, nil)
	}
	return c
}

func (c *verdictCache) shard(k verdictKey) int {
	return int((k.filters ^ uint64(k.post.Author)*0x9E3779B97F4A7C15 ^ uint64(k.post.Millis)) % verdictShards)
}

func (c *verdictCache) get(k verdictKey) (verdict, bool) {
	sh := &c.shards[c.shard(k)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.lru.Get(k)
}

func (c *verdictCache) put(k verdictKey, v verdict) {
	sh := &c.shards[c.shard(k)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.lru.Add(k, v)
}

// filterSetKey hashes the matching rules of filters (64-bit FNV-1a of each
// one's action, wholeWord and phrase, in order): two views with the same
// key judge every text alike.
func filterSetKey(filters []homeFilter) uint64 {
	h := fnv.New64a()
	for _, hf := range filters {
		f := hf.f
		ww := byte(0)
		if f.WholeWord {
			ww = 1
		}
		_, _ = h.Write([]byte{f.Action, ww, byte(len(f.Phrase)), byte(len(f.Phrase) >> 8)})
		_, _ = h.Write([]byte(f.Phrase))
	}
	return h.Sum64()
}
