package weibo

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// HomeTimeline pages through uid's home timeline: uid's own posts and the
// posts of everyone uid follows, newest first (ties in one millisecond by
// author id).
//
// One page costs one prefix scan of weibo:inbox (the tall
// "receive-content-email" table: one row per entry, so the scan returns the
// page already in order) and one batched GetMany that reads the posts'
// content rows together with the viewer's attends rows of their authors. An
// entry whose post is gone or whose author the viewer no longer follows (an
// unfollow or a fan-out still settling, or the trace of one that died,
// which the repairer removes) is skipped; only then does a page need
// another scan (at most timelineRounds scans per page). Reads never delete:
// a delete decided from a read could land after a concurrent re-follow's
// backfill and remove an entry the viewer should see (the writers settle
// the inbox themselves, see repair.go).
//
// It pages both ways (Page): a page before the start cursor of the first
// page a client showed (Last, Before) holds the posts that reached the
// timeline since, oldest of them last; the reversed scan costs the same.
//
// Errors: BAD_USER_INPUT for bad paging arguments.
func (s *Service) HomeTimeline(ctx context.Context, uid UserID, p Page) (*PostConnection, error) {
	q := pageQuery{kind: cursorTimeline, rowLen: tables.InboxKeyLen, rounds: timelineRounds,
		scan: hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid)}}
	edges, info, err := readPageBoth(ctx, s.st, q, p,
		func(ctx context.Context, rows []*hbase.Result) ([]*Post, error) {
			ids := make([]PostID, 0, len(rows))
			at := make([]int, 0, len(rows)) // ids[j] is the entry of rows[at[j]]
			for i, r := range rows {
				if owner, id, ok := tables.DecodeInboxKey(r.Row); ok && owner == uid {
					ids = append(ids, id)
					at = append(at, i)
				}
			}
			posts, err := s.resolveEntries(ctx, uid, ids)
			if err != nil {
				return nil, err
			}
			out := make([]*Post, len(rows))
			for j, p := range posts {
				out[at[j]] = p
			}
			return out, nil
		}, postEdge)
	if err != nil {
		return nil, err
	}
	return &PostConnection{Edges: edges, PageInfo: info}, nil
}

// timelineRounds bounds the inbox scans of one home-timeline page: a page
// whose entries keep turning out stale stops after this many (a shorter
// page with a cursor; the next page goes on after it).
const timelineRounds = 9

// resolveEntries reads, in one GetMany, the content rows of ids and the
// owner's attends rows of their authors; it returns the posts, nil for
// entries to skip (post gone, author not followed).
func (s *Service) resolveEntries(ctx context.Context, owner UserID, ids []PostID) ([]*Post, error) {
	gets := make([]*hbase.Get, 0, 2*len(ids))
	for _, id := range ids {
		gets = append(gets, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)})
	}
	relIdx := map[UserID]int{}
	for _, id := range ids {
		if _, seen := relIdx[id.Author]; !seen && id.Author != owner {
			relIdx[id.Author] = len(gets)
			gets = append(gets, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(owner, tables.Attends, id.Author)})
		}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	posts := make([]*Post, len(ids))
	for i, id := range ids {
		p := postFromRow(id, rs[i])
		if j, ok := relIdx[id.Author]; ok && !rs[j].Exists() {
			p = nil
		}
		posts[i] = p
	}
	return posts, nil
}
