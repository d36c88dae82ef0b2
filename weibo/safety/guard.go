package safety

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/weibo"
)

// Blocker says whether a block stands between two users, either way (read
// from the authorities: the block cells). *Service implements it; the
// like, comment and repost writes hold one (their SetGuard).
type Blocker interface {
	Blocked(ctx context.Context, a, b weibo.UserID) (bool, error)
}

// CheckInteraction returns ErrForbiddenInteraction when a block stands
// between viewer and any of others, either way (one Blocked read per
// other user; viewer and repeats skipped); nil with a nil b (no blocks
// wired). A write calls it before its first row, so a refused write
// leaves nothing.
func CheckInteraction(ctx context.Context, b Blocker, viewer weibo.UserID, others ...weibo.UserID) error {
	if b == nil {
		return nil
	}
	for i, o := range others {
		if o == viewer || slices.Contains(others[:i], o) {
			continue
		}
		blocked, err := b.Blocked(ctx, viewer, o)
		if err != nil {
			return err
		}
		if blocked {
			return ErrForbiddenInteraction()
		}
	}
	return nil
}
