package comment

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
)

// Guard says whether a block stands between two users, either way (read
// from the authorities: the block cells). *safety.Service implements it.
type Guard interface {
	Blocked(ctx context.Context, a, b weibo.UserID) (bool, error)
}

// SetGuard sets the blocks the writes honour. It must be called before
// any call, while the domain is wired (the blocks are built after the
// feed).
func (s *Service) SetGuard(g Guard) { s.guard = g }

// checkBlocks returns safety.ErrForbiddenInteraction when a block stands
// between viewer and any of others, either way (one Blocked read per
// other user, viewer and repeats skipped); nil without a guard.
func (s *Service) checkBlocks(ctx context.Context, viewer weibo.UserID, others ...weibo.UserID) error {
	if s.guard == nil {
		return nil
	}
	for i, o := range others {
		if o == viewer || slices.Contains(others[:i], o) {
			continue
		}
		blocked, err := s.guard.Blocked(ctx, viewer, o)
		if err != nil {
			return err
		}
		if blocked {
			return safety.ErrForbiddenInteraction()
		}
	}
	return nil
}
