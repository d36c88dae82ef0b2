package seed

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
)

// DemoCommentViewer is the demo user whose home timeline gets the demo
// comments: the README's first query logs in as them.
const DemoCommentViewer = "u1"

// demoComments are the demo comments, one pair for each of the viewer's
// newest home-timeline posts: the viewer's comment, and the post's
// author's reply to it.
var demoComments = []struct{ comment, reply string }{
	{"武汉加油！🙏", "谢谢，大家都保重"},
	{"说得好，已转发", "感谢转发"},
	{"希望疫情早日结束", "一定会的，一起加油"},
}

// CommentDemo comments, through svc, the newest posts of viewer's home
// timeline (one for each of demoComments): viewer comments, and the post's
// author replies to that comment, so that GraphiQL shows comments, a
// reply and commentCount on the first page of the README's query. A post
// that has comments already is left alone, so a second run changes
// nothing; a viewer who does not exist, or sees no posts, gets none.
// Errors are the domain's.
func CommentDemo(ctx context.Context, svc *domain.Domain, viewer string) error {
	u, err := svc.Accounts.UserByUsername(ctx, viewer)
	if err != nil || u == nil {
		return err
	}
	n := len(demoComments)
	page, err := svc.Timeline.HomeTimeline(ctx, u.ID, weibo.Page{First: &n})
	if err != nil {
		return err
	}
	for i, e := range page.Edges {
		p := e.Post
		if p.CommentCount > 0 {
			continue
		}
		c, err := svc.Comments.AddComment(ctx, u.ID, p.ID, demoComments[i].comment, nil)
		if err != nil {
			return err
		}
		if _, err := svc.Comments.AddComment(ctx, p.ID.Author, p.ID, demoComments[i].reply, &c.ID); err != nil {
			return err
		}
	}
	return nil
}
