package loaders

import (
	"context"
	"sync"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// standingMemo keeps the request's viewer's standing once read.
type standingMemo struct {
	mu    sync.Mutex // held across the read
	owner weibo.UserID
	read  bool
	st    org.Standing
}

// ViewerStanding returns the request's viewer's standing (permissions,
// rank, whether they manage a department: authz.Service.Standing), read
// the first time a field of the request asks and kept for the rest of it,
// so that a page of users deciding what of each profile the viewer sees
// reads it once. Without a viewer it is the zero Standing and nothing is
// read. Errors are the store's.
func (l *Loaders) ViewerStanding(ctx context.Context) (org.Standing, error) {
	viewer, ok := auth.OptionalViewer(ctx)
	if !ok {
		return org.Standing{}, nil
	}
	m := &l.standing
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.read && m.owner == viewer {
		return m.st, nil
	}
	st, err := l.svc.Org.Authz.Standing(ctx, viewer)
	if err != nil {
		return org.Standing{}, err
	}
	m.st, m.owner, m.read = st, viewer, true
	return st, nil
}

// ForgetStanding drops the standing ViewerStanding kept: a change of
// roles or permissions in the request makes the fields after it read the
// standing anew.
func (l *Loaders) ForgetStanding() {
	l.standing.mu.Lock()
	l.standing.read = false
	l.standing.mu.Unlock()
}
