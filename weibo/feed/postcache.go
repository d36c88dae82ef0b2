package feed

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/weibohbase/gateway/weibo"
)

// The post cache. A post's text, author and original never change once
// written; only its counters do, and it may be deleted. Home timelines of
// many viewers show the same posts, so the gateway keeps the posts it read
// for home-timeline pages (without their counters) and serves a page that
// selects no counter from it: its batched read then holds only the
// misses' content rows and the viewer's attends rows, as Twitter hydrates
// timelines from a tweet cache.
//
// A delete removes the post from this instance's cache at once and keeps
// it out (a tombstone) for the cache's TTL, so no read that began before
// the delete brings it back; other instances serve it until their entry
// expires (the TTL, default DefaultPostCacheTTL) or the delete's
// retraction removes the viewer's inbox entry, whichever comes first.

// DefaultPostCacheSize and DefaultPostCacheTTL are the defaults of
// WithPostCache: about 20 MB of posts of a hundred characters, and how
// long another instance may show a post after its delete.
const (
	DefaultPostCacheSize = 50_000
	DefaultPostCacheTTL  = 10 * time.Second
)

// WithPostCache sets how many posts the post cache holds and for how long
// an entry serves (defaults DefaultPostCacheSize, DefaultPostCacheTTL);
// size <= 0 turns the cache off.
func WithPostCache(size int, ttl time.Duration) Option {
	return func(o *options) { o.postCacheSize, o.postCacheTTL = size, ttl }
}

// postCache is the post cache: an LRU of posts by id, each entry serving
// until it expires. Its methods are safe for concurrent use; a nil
// postCache caches nothing.
type postCache struct {
	mu  sync.Mutex
	lru *simplelru.LRU[weibo.PostID, cachedPost]
	ttl time.Duration
	now func() time.Time
}

// cachedPost is one entry: a post without its counters, or a tombstone
// (post nil) of a post this instance deleted; either serves until
// expires.
type cachedPost struct {
	post    *postWithAuthor
	expires time.Time
}

// newPostCache returns a cache of size posts whose entries serve ttl; nil
// when size <= 0 or ttl <= 0.
func newPostCache(size int, ttl time.Duration, now func() time.Time) *postCache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	lru, _ := simplelru.NewLRU[weibo.PostID, cachedPost](size, nil)
	return &postCache{lru: lru, ttl: ttl, now: now}
}

// get returns a copy of the cached post id (its counters zero; the caller
// may keep it) and true, or nil and false when the cache has no live entry
// for it or only a tombstone.
func (c *postCache) get(id weibo.PostID) (*Post, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.lru.Get(id)
	c.mu.Unlock()
	if !ok || e.post == nil || !c.now().Before(e.expires) {
		return nil, false
	}
	pa := *e.post
	pa.post.author = &pa.author
	if pa.post.RepostOfID != nil {
		pa.post.RepostOfID = &pa.root
	}
	return &pa.post, true
}

// put caches p (read from its content row just now), without its
// counters, unless a live tombstone of p says this instance deleted it.
func (c *postCache) put(p *Post) {
	if c == nil || p == nil {
		return
	}
	pa := &postWithAuthor{post: Post{ID: p.ID, Content: p.Content, AuthorName: p.AuthorName},
		author: weibo.User{ID: p.ID.Author, Username: p.AuthorName}}
	if p.RepostOfID != nil {
		pa.root = *p.RepostOfID
		pa.post.RepostOfID = &pa.root
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Peek(p.ID); ok && e.post == nil && now.Before(e.expires) {
		return
	}
	c.lru.Add(p.ID, cachedPost{post: pa, expires: now.Add(c.ttl)})
}

// forget replaces post id's entry with a tombstone: a post this instance
// deleted.
func (c *postCache) forget(id weibo.PostID) {
	if c == nil {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Add(id, cachedPost{expires: now.Add(c.ttl)})
}
