package weibo

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
)

// HomeTimeline pages through uid's home timeline: uid's own posts and the
// posts of everyone uid follows, newest first (ties in one millisecond by
// author id).
//
// One page costs one prefix scan of weibo:inbox (the tall
// "receive-content-email" table: one row per entry, so the scan returns the
// page already in order) and one batched GetMany that reads the posts'
// content rows together with the viewer's attends rows of their authors. An
// entry whose post is gone or whose author the viewer no longer follows (a
// fan-out racing an unfollow, or a half-done unfollow) is skipped and
// deleted; only then does a page need another scan.
//
// Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) HomeTimeline(ctx context.Context, uid UserID, first *int, afterCur *string) (*PostPage, error) {
	prefix := InboxPrefix(uid)
	n, start, err := pageStart(first, afterCur, cursorTimeline, 16, prefix)
	if err != nil {
		return nil, err
	}
	page := &PostPage{}
	for round := 0; ; round++ {
		want := n + 1 - len(page.Edges)
		rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: TableInbox, Prefix: prefix, Start: start, Limit: want})
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			break
		}
		start = append(append([]byte{}, rows[len(rows)-1].Row...), 0)
		ids := make([]PostID, 0, len(rows))
		for _, r := range rows {
			if id, ok := PostIDFromInboxKey(r.Row); ok {
				ids = append(ids, id)
			}
		}
		posts, stale, err := s.resolveEntries(ctx, uid, ids)
		if err != nil {
			return nil, err
		}
		for i, p := range posts {
			if p == nil {
				continue
			}
			if len(page.Edges) == n {
				page.PageInfo.HasNextPage = true
				break
			}
			key := InboxKey(uid, ids[i])
			page.Edges = append(page.Edges, PostEdge{Post: p, Cursor: encodeCursor(cursorTimeline, key[9:])})
		}
		if len(stale) > 0 {
			if err := s.st.DeleteMany(ctx, stale); err != nil {
				s.log.Warn("could not delete stale inbox rows", "user", uid.String(), "err", err)
			}
		}
		if page.PageInfo.HasNextPage || len(rows) < want || round >= 8 {
			break
		}
	}
	return page.finish(), nil
}

// resolveEntries reads, in one GetMany, the content rows of ids and the
// owner's attends rows of their authors; it returns the posts (nil for
// entries to skip) and the deletes of the stale inbox rows.
func (s *Service) resolveEntries(ctx context.Context, owner UserID, ids []PostID) ([]*Post, []*hbase.Delete, error) {
	gets := make([]*hbase.Get, 0, 2*len(ids))
	for _, id := range ids {
		gets = append(gets, &hbase.Get{Table: TableContent, Row: ContentKey(id)})
	}
	relIdx := map[UserID]int{}
	for _, id := range ids {
		if _, seen := relIdx[id.Author]; !seen && id.Author != owner {
			relIdx[id.Author] = len(gets)
			gets = append(gets, &hbase.Get{Table: TableRelations, Row: RelationKey(owner, dirAttends, id.Author)})
		}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, nil, err
	}
	posts := make([]*Post, len(ids))
	var stale []*hbase.Delete
	for i, id := range ids {
		p := postFromRow(id, rs[i])
		if j, ok := relIdx[id.Author]; ok && !rs[j].Exists() {
			p = nil
		}
		if p == nil {
			stale = append(stale, &hbase.Delete{Table: TableInbox, Row: InboxKey(owner, id)})
		}
		posts[i] = p
	}
	return posts, stale, nil
}
