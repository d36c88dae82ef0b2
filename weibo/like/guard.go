package like

import "github.com/weibohbase/gateway/weibo/safety"

// SetGuard sets the blocks the writes honour (a write across a block is
// FORBIDDEN: safety.CheckInteraction). It must be called before any
// call, while the domain is wired.
func (s *Service) SetGuard(g safety.Blocker) { s.guard = g }
