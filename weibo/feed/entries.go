package feed

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// ResolveEntries reads, in one GetMany, the content rows of ids (the
// entries of owner's home timeline) and the owner's attends rows of their
// authors and of the users extra; it returns the posts, nil for entries to
// skip (post gone, author not followed), and for each of extra whether the
// owner follows them. With cached, a post the post cache holds is taken
// from there (counters zero) and only the others' content rows are read
// (and cached). With withSet, the owner's Set is returned (a nil
// *safety.Set without it): with the safety service set (SetSafety), the
// GetMany reads the row's version cell alone (safety.VersionGet) and the
// service answers the Set it remembers for that version — one Get of the
// whole row more only when the viewer's Set changed since this instance
// last read it —; without it, the GetMany reads the whole row
// (safety.RowGet). Either way the viewer's blocks, mutes and filters cost
// the page no store call of their own while they stay as they are. The posts are not filtered by it:
// which ones a read hides is the caller's rule. Errors are the store's,
// unwrapped: the caller's read names them.
func (s *Service) ResolveEntries(ctx context.Context, owner weibo.UserID, ids []weibo.PostID, extra []weibo.UserID, cached, withSet bool) ([]*Post, []bool, *safety.Set, error) {
	posts := make([]*Post, len(ids))
	rowOf := make([]int, len(ids)) // the Get of ids[i]'s content row, -1 for a cached post
	reads := 0
	for i, id := range ids {
		if cached {
			if p, ok := s.posts.get(id); ok {
				posts[i], rowOf[i] = p, -1
				continue
			}
		}
		rowOf[i] = reads
		reads++
	}
	// The Gets and their rowkeys are allocated together, each rowkey a
	// full slice expression of keys (a page: 2 allocations, not 200).
	n := reads + len(ids) + len(extra) + 1
	gs := make([]hbase.Get, 0, n)
	gets := make([]*hbase.Get, 0, n)
	keys := make([]byte, 0, reads*tables.ContentKeyLen+(len(ids)+len(extra))*tables.RelationKeyLen)
	add := func(table string, start int) {
		gs = append(gs, hbase.Get{Table: table, Row: keys[start:len(keys):len(keys)]})
		gets = append(gets, &gs[len(gs)-1])
	}
	for i, id := range ids {
		if rowOf[i] >= 0 {
			start := len(keys)
			keys = tables.AppendContentKey(keys, id)
			add(tables.Content, start)
		}
	}
	relIdx := make(map[weibo.UserID]int, len(ids)+len(extra))
	attends := func(a weibo.UserID) {
		if _, seen := relIdx[a]; !seen && a != owner {
			relIdx[a] = len(gets)
			start := len(keys)
			keys = tables.AppendRelationKey(keys, owner, tables.Attends, a)
			add(tables.Relations, start)
		}
	}
	for _, id := range ids {
		attends(id.Author)
	}
	for _, a := range extra {
		attends(a)
	}
	setAt := -1
	if withSet {
		setAt = len(gets)
		if s.sets != nil {
			gets = append(gets, safety.VersionGet(owner))
		} else {
			gets = append(gets, safety.RowGet(owner))
		}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, nil, nil, err
	}
	var set *safety.Set
	switch {
	case setAt >= 0 && s.sets != nil:
		if set, err = s.sets.SetForVersion(ctx, owner, rs[setAt]); err != nil {
			return nil, nil, nil, err
		}
	case setAt >= 0:
		set = safety.FromRow(owner, rs[setAt], s.w.NowMillis())
	}
	for i, id := range ids {
		p := posts[i]
		if k := rowOf[i]; k >= 0 {
			if p = PostFromRow(id, rs[k]); cached {
				s.posts.put(p)
			}
		}
		if j, ok := relIdx[id.Author]; ok && !rs[j].Exists() {
			p = nil
		}
		posts[i] = p
	}
	follows := make([]bool, len(extra))
	for i, a := range extra {
		if j, ok := relIdx[a]; ok {
			follows[i] = rs[j].Exists()
		}
	}
	return posts, follows, set, nil
}
