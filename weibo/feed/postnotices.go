package feed

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Notices is what the feed needs of the notifications (package notify):
// the notify writes of a post (its mentions, a repost's REPOST), and a
// check of each kind it sends. *notify.Service
// implements it.
type Notices interface {
	SendNotice(ctx context.Context, n notify.Notice, mode notify.NoticeMode) error
	SendNotices(ctx context.Context, ns []notify.Notice, mode notify.NoticeMode) error
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// registerNoticeChecks tells the notifications how the feed's are checked:
// a MENTION in a post against the post (while it exists and mentions the
// recipient).
func (s *Service) registerNoticeChecks() {
	s.notices.RegisterNoticeCheck(func(n notify.Notice) bool {
		_, isPost := n.Subject.Post()
		_, isComment := n.Subject.Comment()
		return n.Kind == tables.NotifMention && isPost && !isComment
	}, func(ctx context.Context, n notify.Notice) (bool, bool, error) {
		post, _ := n.Subject.Post()
		ps, err := s.GetPosts(ctx, []weibo.PostID{post})
		if err != nil || ps[0] == nil {
			return false, false, err
		}
		return notify.NoticeIn(postNotices(ps[0]), n), true, nil
	})
}

// postNotices returns the notifications post p sends: REPOST to its
// root's author for a repost, MENTION to each user it mentions — one per
// recipient (a root author it mentions gets the REPOST), none to its
// author.
func postNotices(p *Post) []notify.Notice {
	var out []notify.Notice
	add := func(n notify.Notice) {
		if n.Recipient != n.Actor && !slices.ContainsFunc(out, func(x notify.Notice) bool { return x.Recipient == n.Recipient }) {
			out = append(out, n)
		}
	}
	if p.RepostOfID != nil {
		add(notify.Notice{Kind: tables.NotifRepost, Recipient: p.RepostOfID.Author, Actor: p.ID.Author, Subject: tables.PostSubject(*p.RepostOfID), At: p.ID.Millis})
	}
	for _, m := range p.MentionRefs {
		add(notify.Notice{Kind: tables.NotifMention, Recipient: m.User, Actor: p.ID.Author, Subject: tables.PostSubject(p.ID), At: p.ID.Millis})
	}
	return out
}

// notifyPost sends post p's notifications (postNotices) as a sync, once
// its content row is stored (p as the fan-out read it): the fan-out calls
// it, and a fan-out run again (the outbox's sweep after a crash) adds
// nobody twice.
func (s *Service) notifyPost(ctx context.Context, p *Post) error {
	if p.RepostOfID == nil && len(p.MentionRefs) == 0 {
		return nil
	}
	return s.notices.SendNotices(ctx, postNotices(p), notify.NoticeSync)
}

// notifies reports whether a post with these cells sends notifications
// (a repost, or a text with mentions): its publish then leaves the
// sending to the fan-out, for a large author too.
func notifies(cells map[string][]byte) bool {
	return cells[tables.ColRepostOf] != nil || len(cells[tables.ColMentions]) > 0
}

// Posted sends the notifications of post id, whose content row is r, as a
// sync, and returns its encoded live event (fanout.Host: the fan-out
// calls it once the post is stored, again when it runs again).
func (s *Service) Posted(ctx context.Context, id weibo.PostID, r *hbase.Result) ([]byte, error) {
	p := PostFromRow(id, r)
	if err := s.notifyPost(ctx, p); err != nil {
		return nil, err
	}
	return addedEvent(p), nil
}
