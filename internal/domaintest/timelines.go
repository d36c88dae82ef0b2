package domaintest

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// UserPosts returns every stored post of uid, newest first, read page by
// page (UserPosts of the feed, pages of 100).
func UserPosts(ctx context.Context, d *domain.Domain, uid weibo.UserID) ([]weibo.PostID, error) {
	hundred := 100
	var out []weibo.PostID
	var after *string
	for {
		p, err := d.Feed.UserPosts(ctx, uid, weibo.Page{First: &hundred, After: after})
		if err != nil {
			return nil, err
		}
		for _, e := range p.Edges {
			out = append(out, e.Post.ID)
		}
		if !p.PageInfo.HasNextPage {
			return out, nil
		}
		after = p.PageInfo.EndCursor
	}
}

// Timelines checks the home timeline and the inbox of each of users
// against a recomputation from what the store holds: the user's own
// stored posts and those of whom they follow now, newest first. The
// timeline's first page of 100 must be exactly the newest 100 of them,
// and the inbox must hold exactly them (users of small accounts: a large
// account's posts are merged at read time, not pushed). It returns an
// error naming the first user whose timeline or inbox differs, or the
// store's.
func Timelines(ctx context.Context, d *domain.Domain, users ...weibo.UserID) error {
	hundred := 100
	for _, uid := range users {
		var follows []weibo.UserID
		var after *string
		for {
			c, err := d.Follows.FollowList(ctx, uid, &hundred, after)
			if err != nil {
				return err
			}
			for _, e := range c.Edges {
				follows = append(follows, e.User)
			}
			if !c.PageInfo.HasNextPage {
				break
			}
			after = c.PageInfo.EndCursor
		}
		var want []weibo.PostID
		for _, a := range append([]weibo.UserID{uid}, follows...) {
			ps, err := UserPosts(ctx, d, a)
			if err != nil {
				return err
			}
			want = append(want, ps...)
		}
		slices.SortFunc(want, func(a, b weibo.PostID) int {
			return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
		})
		page, err := d.Timeline.HomeTimeline(ctx, uid, weibo.Page{First: &hundred})
		if err != nil {
			return err
		}
		var got []weibo.PostID
		for _, e := range page.Edges {
			got = append(got, e.Post.ID)
		}
		if top := want[:min(len(want), 100)]; !slices.Equal(got, top) {
			return fmt.Errorf("home timeline of %d (following %v):\n got  %v\n want %v", uid, follows, got, top)
		}
		var inbox []weibo.PostID
		err = d.Store().Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid)}, func(r *hbase.Result) error {
			if _, id, ok := tables.DecodeInboxKey(r.Row); ok {
				inbox = append(inbox, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !slices.Equal(inbox, want) {
			return fmt.Errorf("inbox of %d:\n holds %v\n want  %v", uid, inbox, want)
		}
	}
	return nil
}
