package safety

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Mute makes viewer mute target and returns target: target's posts and
// reposts leave viewer's home timeline and its live events, and with
// notifications their notifications too; target's profile and posts stay
// readable, and target notices nothing. duration is in seconds, nil for
// until unmuted; a timed mute ends by itself (its entry carries its end).
// Muting again replaces the mute. One CheckAndPut of viewer's mute cell
// (not counted: the bound counts the live entries as the cell is
// written). Errors: BAD_USER_INPUT when viewer == target, duration is
// not in 1…MaxDuration, or viewer mutes MaxMutes users already;
// NOT_FOUND when target does not exist.
func (s *Service) Mute(ctx context.Context, viewer, target weibo.UserID, duration *int, notifications bool) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "mute %s → %s", viewer, target)
	if viewer == target {
		return nil, weibo.BadInput("userId", "you cannot mute yourself")
	}
	if duration != nil && (*duration < 1 || *duration > MaxDuration) {
		return nil, weibo.BadInput("duration", "duration must be between 1 and %d seconds, or null for until unmuted", MaxDuration)
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	_, err = s.update(ctx, viewer, tables.ColMutes, func(cur []byte) ([]byte, bool, error) {
		now := s.w.NowMillis()
		m := tables.Mutes(cur)
		if !m.Valid() {
			m = nil
		}
		if e, ok := m.Find(target); (!ok || !e.Live(now)) && m.LiveLen(now) >= MaxMutes {
			return nil, false, weibo.BadInput("userId", "you mute %d users already, the most one user may", MaxMutes)
		}
		e := tables.MuteEntry{UID: target, At: now, Notifications: notifications}
		if duration != nil {
			e.Expires = now + int64(*duration)*time.Second.Milliseconds()
		}
		return m.Put(e, now), true, nil
	})
	if err != nil {
		return nil, err
	}
	s.emitChange(viewer)
	return u, nil
}

// Unmute makes viewer stop muting target and returns target. It is
// idempotent. Errors: BAD_USER_INPUT when viewer == target, NOT_FOUND
// when target does not exist.
func (s *Service) Unmute(ctx context.Context, viewer, target weibo.UserID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "unmute %s → %s", viewer, target)
	if viewer == target {
		return nil, weibo.BadInput("userId", "you cannot unmute yourself")
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	wrote, err := s.update(ctx, viewer, tables.ColMutes, func(cur []byte) ([]byte, bool, error) {
		m := tables.Mutes(cur)
		if !m.Valid() {
			return nil, len(cur) > 0, nil
		}
		if _, ok := m.Find(target); !ok {
			return nil, false, nil
		}
		return m.Without(target, s.w.NowMillis()), true, nil
	})
	if err != nil {
		return nil, err
	}
	if wrote {
		s.emitChange(viewer)
	}
	return u, nil
}
