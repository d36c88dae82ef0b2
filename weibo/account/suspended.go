package account

import (
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// Suspensions says, from memory, whether a user is suspended now and
// until when. *suspend.Registry implements it.
type Suspensions interface {
	// SuspendedUntil reports whether uid is suspended at nowMillis and,
	// when so, the suspension's end in ms (0: until lifted).
	SuspendedUntil(uid weibo.UserID, nowMillis int64) (untilMillis int64, suspended bool)
}

// SetSuspensions makes Login refuse suspended users (ACCOUNT_SUSPENDED).
// It must be called before any call, while the domain is wired.
func (s *Service) SetSuspensions(susp Suspensions) { s.susp = susp }

// suspendedError is ACCOUNT_SUSPENDED for uid when susp says uid is
// suspended now, with extensions.until its end (RFC 3339, absent when it
// lasts until lifted); nil otherwise.
func (s *Service) suspendedError(uid weibo.UserID) error {
	if s.susp == nil {
		return nil
	}
	until, ok := s.susp.SuspendedUntil(uid, s.w.NowMillis())
	if !ok {
		return nil
	}
	e := &weibo.Error{Code: weibo.CodeAccountSuspended, Message: "this account is suspended"}
	if until != 0 {
		at := time.UnixMilli(until).UTC()
		e.Message = "this account is suspended until " + at.Format(time.RFC3339)
		e.Extensions = map[string]any{"until": at.Format(time.RFC3339Nano)}
	}
	return e
}
