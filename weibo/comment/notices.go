package comment

import (
	"bytes"
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// commentNotices returns the notifications comment c on a post of
// postAuthor sends, one per recipient, first kind first: REPLY to the
// author of the comment it replies to, COMMENT to the post's author,
// MENTION to each user it mentions; none to its author.
func commentNotices(c *Comment, postAuthor weibo.UserID) []notify.Notice {
	var out []notify.Notice
	subject := tables.CommentSubject(c.ID)
	add := func(kind tables.NotifKind, to weibo.UserID) {
		if to != c.ID.Author && !slices.ContainsFunc(out, func(x notify.Notice) bool { return x.Recipient == to }) {
			out = append(out, notify.Notice{Kind: kind, Recipient: to, Actor: c.ID.Author, Subject: subject, At: c.ID.Millis})
		}
	}
	if c.ReplyTo != nil {
		add(tables.NotifReply, c.ReplyTo.Author)
	}
	add(tables.NotifComment, postAuthor)
	for _, m := range c.MentionRefs {
		add(tables.NotifMention, m.User)
	}
	return out
}

// noticeWanted is the check of a notification whose subject is a comment
// (notify.WantedFunc): its actor belongs in it while the comment exists and
// sends it; a deleted comment's notification is left as it is (its
// comment then resolves to null).
func (s *Service) noticeWanted(ctx context.Context, n notify.Notice) (want, known bool, err error) {
	id, _ := n.Subject.Comment()
	cs, err := s.GetComments(ctx, []weibo.CommentID{id})
	if err != nil || cs[0] == nil {
		return false, false, err
	}
	return notify.NoticeIn(commentNotices(cs[0], id.Post.Author), n), true, nil
}

// deleteComments deletes the comment rows of post id, which is gone
// (feed.DeleteHook): one prefix scan of weibo:comments (a post's comments
// are its content rowkey's prefix) and DeleteMany batches.
func (s *Service) deleteComments(ctx context.Context, id weibo.PostID) error {
	var dels []*hbase.Delete
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Comments, Prefix: tables.ContentKey(id)}, func(r *hbase.Result) error {
		dels = append(dels, &hbase.Delete{Table: tables.Comments, Row: bytes.Clone(r.Row)})
		if len(dels) >= s.w.Batch() {
			err := s.st.DeleteMany(ctx, dels)
			dels = dels[:0]
			return err
		}
		return nil
	})
	if err == nil && len(dels) > 0 {
		err = s.st.DeleteMany(ctx, dels)
	}
	return err
}
