package domaintest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// WaitQuiet waits until the fan-out queue is drained and weibo:pending and
// weibo:outbox are empty (every write finished or repaired by the
// service's own sweeps), failing after limit.
func WaitQuiet(t testing.TB, svc *domain.Domain, limit time.Duration) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(limit)
	for {
		if err := svc.FlushFanout(ctx); err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, table := range []string{tables.Pending, tables.Outbox} {
			rows, err := hbase.ScanAll(ctx, svc.Store(), &hbase.Scan{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) > 0 {
				left = append(left, fmt.Sprintf("%d rows in %s", len(rows), table))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not quiet after %s: %s", limit, strings.Join(left, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// AllPages reads every page of a user connection.
func AllPages(t testing.TB, page func(after *string) (*weibo.UserConnection, error)) []weibo.UserID {
	t.Helper()
	var out []weibo.UserID
	var after *string
	for {
		p, err := page(after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Edges {
			out = append(out, e.User)
		}
		if !p.PageInfo.HasNextPage {
			return out
		}
		after = p.PageInfo.EndCursor
	}
}

// Leftovers counts the rows of weibo:pending and weibo:outbox.
func Leftovers(t testing.TB, st hbase.Store) int {
	t.Helper()
	n := 0
	for _, table := range []string{tables.Pending, tables.Outbox} {
		rows, err := hbase.ScanAll(t.Context(), st, &hbase.Scan{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		n += len(rows)
	}
	return n
}

// Notifs lists every notification of uid, newest first, in pages of n.
func Notifs(t testing.TB, svc *domain.Domain, uid weibo.UserID, n int) []*notify.Notification {
	t.Helper()
	var out []*notify.Notification
	for after := (*string)(nil); ; {
		page, err := svc.Notify.Notifications(t.Context(), uid, &n, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Edges {
			out = append(out, e.Notification)
		}
		if !page.PageInfo.HasNextPage {
			return out
		}
		after = page.PageInfo.EndCursor
	}
}

// Unread reads uid's kept unread count.
func Unread(t testing.TB, svc *domain.Domain, uid weibo.UserID) int64 {
	t.Helper()
	us, err := svc.Accounts.GetUsers(t.Context(), []weibo.UserID{uid})
	if err != nil || us[0] == nil {
		t.Fatalf("user %s: %v", uid, err)
	}
	return us[0].UnreadNotifications
}

// CheckFsck runs fsck on the social area and fails on any issue.
func CheckFsck(t testing.TB, svc *domain.Domain) {
	t.Helper()
	rep, err := fsck.Run(t.Context(), svc, fsck.Options{Areas: fsck.AreaSocial})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) != 0 {
		t.Fatalf("fsck: %+v", rep.Issues)
	}
}

// Likers reads every page of the post's likes, newest like first.
func Likers(t testing.TB, svc *domain.Domain, post weibo.PostID, pageSize int) []weibo.UserID {
	t.Helper()
	return AllPages(t, func(after *string) (*weibo.UserConnection, error) {
		return svc.Likes.PostLikes(t.Context(), post, &pageSize, after)
	})
}

// PostComments lists every comment of post, newest first, in pages of
// size n, and checks that paging backward from the end gives the same
// list.
func PostComments(t testing.TB, svc *domain.Domain, post weibo.PostID, n int) []weibo.CommentID {
	t.Helper()
	ctx := t.Context()
	var fwd []weibo.CommentID
	for after := (*string)(nil); ; {
		page, err := svc.Comments.PostComments(ctx, post, weibo.Page{First: &n, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Edges {
			fwd = append(fwd, e.Comment.ID)
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = page.PageInfo.EndCursor
	}
	var back []weibo.CommentID
	for before := (*string)(nil); ; {
		page, err := svc.Comments.PostComments(ctx, post, weibo.Page{Last: &n, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]weibo.CommentID, len(page.Edges))
		for i, e := range page.Edges {
			ids[i] = e.Comment.ID
		}
		back = append(ids, back...)
		if !page.PageInfo.HasPreviousPage {
			break
		}
		before = page.PageInfo.StartCursor
	}
	if !slices.Equal(fwd, back) {
		t.Fatalf("comments forward %v, backward %v", fwd, back)
	}
	return fwd
}

// CommentCount reads post's commentCount as GetPosts returns it.
func CommentCount(t testing.TB, svc *domain.Domain, post weibo.PostID) int64 {
	t.Helper()
	ps, err := svc.Feed.GetPosts(t.Context(), []weibo.PostID{post})
	if err != nil || ps[0] == nil {
		t.Fatalf("post %s: %v, %v", post, ps, err)
	}
	return ps[0].CommentCount
}

// WantCode fails the test unless err carries the GraphQL error code code
// (weibo.CodeOf); what names the call.
func WantCode(t testing.TB, err error, code, what string) {
	t.Helper()
	if got := weibo.CodeOf(err); got != code {
		t.Fatalf("%s: want code %s, got %v", what, code, err)
	}
}

// InboxHas counts post's entries in owner's inbox: one prefix scan.
func InboxHas(t testing.TB, svc *domain.Domain, owner weibo.UserID, post weibo.PostID) int {
	t.Helper()
	n := 0
	err := svc.Store().Scan(t.Context(), &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(owner)}, func(r *hbase.Result) error {
		if _, id, ok := tables.DecodeInboxKey(r.Row); ok && id == post {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
