package seed

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
)

// demoReposts are the reposts RepostDemo makes, in order: the user who
// reposts (by data set id), the user whose newest post they repost, and
// the comment. The second reposts the first (a repost of a repost, whose
// original is u4's post; its comment carries the chain, as Weibo's
// "//@user:" does); the third has no comment (its content is 转发微博).
// u1, the user README's first query logs in as, follows u2 to u6, so they
// lead u1's home timeline.
var demoReposts = []struct {
	by, of  weibo.UserID
	comment string
}{
	{2, 4, "致敬所有在一线的人。"},
	{3, 2, "说得好 //@u2: 致敬所有在一线的人。"},
	{5, 4, ""},
	{6, 1, "转发给大家"},
}

// RepostDemo makes a few reposts among the demo data set's users through
// svc (demoReposts), so that `make run` shows reposts: it skips a repost
// whose users or post the store does not hold. It is not idempotent (each
// run reposts again): `gateway serve --demo` runs it once per store.
// Errors are the domain's.
func RepostDemo(ctx context.Context, svc *domain.Domain) error {
	one := 1
	for _, r := range demoReposts {
		us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{r.by})
		if err != nil {
			return err
		}
		page, err := svc.Feed.UserPosts(ctx, r.of, weibo.Page{First: &one})
		if err != nil {
			return err
		}
		if us[0] == nil || len(page.Edges) == 0 {
			continue
		}
		if _, err := svc.Reposts.Repost(ctx, r.by, page.Edges[0].Post.ID, r.comment); err != nil {
			return err
		}
	}
	return nil
}
