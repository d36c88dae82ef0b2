package comment

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
)

// SetGuard sets the blocks the writes honour (a write across a block is
// FORBIDDEN: safety.CheckInteraction). It must be called before any
// call, while the domain is wired.
func (s *Service) SetGuard(g safety.Blocker) { s.guard = g }

// SetSuspensions hides the comments of the users susp says are suspended
// from every other user's pages of a post's comments. It must be called
// before any call, while the domain is wired.
func (s *Service) SetSuspensions(susp weibo.Suspensions) { s.susp = susp }

// VisibleComments is GetComments as the API's reads show comments (a
// reply's replyTo, node(id:), a notification's comment): nil too for a
// comment whose author is suspended now (SetSuspensions).
func (s *Service) VisibleComments(ctx context.Context, ids []weibo.CommentID) ([]*Comment, error) {
	cs, err := s.GetComments(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	for i, c := range cs {
		if c != nil && s.susp.Suspended(c.ID.Author, now) {
			cs[i] = nil
		}
	}
	return cs, nil
}
