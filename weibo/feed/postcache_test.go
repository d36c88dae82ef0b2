package feed

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// TestPostCache: what the cache serves (a copy, without counters, its
// own original pointer), when (before the TTL; never after a tombstone,
// which a later put does not undo until it expires) and a nil cache.
func TestPostCache(t *testing.T) {
	now := time.UnixMilli(1_600_000_000_000)
	c := newPostCache(2, 10*time.Second, func() time.Time { return now })
	root := weibo.PostID{Author: 1, Millis: 5}
	p := &Post{ID: weibo.PostID{Author: 2, Millis: 7}, Content: "转发", AuthorName: "bob", LikeCount: 3, RepostOfID: &root}
	q := &Post{ID: weibo.PostID{Author: 3, Millis: 9}, Content: "原创", AuthorName: "carol", CommentCount: 2}

	c.put(p)
	got, ok := c.get(p.ID)
	switch {
	case !ok:
		t.Fatal("a post just put is not served")
	case got == p || got.Content != p.Content || got.AuthorName != "bob" || got.Author().Username != "bob" || got.Author().ID != 2:
		t.Fatalf("served %+v, want a copy of %+v", got, p)
	case got.LikeCount != 0 || got.CommentCount != 0 || got.RepostCount != 0:
		t.Fatalf("served counters %+v: the cache keeps none", got)
	case got.RepostOfID == nil || *got.RepostOfID != root || got.RepostOfID == p.RepostOfID:
		t.Fatalf("served original %v, want a copy of %v", got.RepostOfID, root)
	}
	*got.RepostOfID = weibo.PostID{}
	if again, _ := c.get(p.ID); *again.RepostOfID != root {
		t.Fatal("a served copy shares its original with the cache")
	}

	c.put(q)
	if got, ok := c.get(q.ID); !ok || got.RepostOfID != nil || got.Content != "原创" {
		t.Fatalf("served %+v, %v for an original post", got, ok)
	}

	c.forget(p.ID)
	if _, ok := c.get(p.ID); ok {
		t.Fatal("a forgotten post is served")
	}
	c.put(p) // a read that began before the delete
	if _, ok := c.get(p.ID); ok {
		t.Fatal("a put after the tombstone brings the deleted post back")
	}

	now = now.Add(10 * time.Second)
	if _, ok := c.get(q.ID); ok {
		t.Fatal("an entry is served at its TTL")
	}
	c.put(p) // the tombstone has expired
	if _, ok := c.get(p.ID); !ok {
		t.Fatal("a put after the tombstone's expiry is not served")
	}

	var none *postCache
	none.put(p)
	none.forget(p.ID)
	if _, ok := none.get(p.ID); ok || newPostCache(0, time.Second, time.Now) != nil {
		t.Fatal("a cache of size 0 caches")
	}
}
