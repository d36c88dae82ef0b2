package loaders

import (
	"context"
	"errors"
	"sync"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// standingMemo keeps the request's viewer's standing once read, and the
// verdicts of DepartmentVisible.
type standingMemo struct {
	mu    sync.Mutex // held across the read
	owner weibo.UserID
	read  bool
	st    org.Standing

	dmu    sync.Mutex // held across the check
	depts  map[weibo.DeptID]bool
	downer weibo.UserID
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
	l.standing.dmu.Lock()
	l.standing.depts = nil
	l.standing.dmu.Unlock()
}

// DepartmentVisible returns whether the request's viewer sees the people
// of department did (its members and managers, who is in it): a holder of
// MANAGE_DEPARTMENTS, or a manager of its subtree — decided by
// authz.Service.Departments once per department and request, so a page of
// users of one department costs one check. Without a viewer it is false.
// Errors are the store's.
func (l *Loaders) DepartmentVisible(ctx context.Context, did weibo.DeptID) (bool, error) {
	viewer, ok := auth.OptionalViewer(ctx)
	if !ok {
		return false, nil
	}
	st, err := l.ViewerStanding(ctx)
	if err != nil {
		return false, err
	}
	if st.Perms.Has(org.PermManageDepartments) {
		return true, nil
	}
	if !st.Manager || did == weibo.RootDept {
		return false, nil
	}
	m := &l.standing
	m.dmu.Lock()
	defer m.dmu.Unlock()
	if m.depts == nil || m.downer != viewer {
		m.depts, m.downer = map[weibo.DeptID]bool{}, viewer
	}
	if v, ok := m.depts[did]; ok {
		return v, nil
	}
	err = l.svc.Org.Authz.Departments(ctx, viewer, did)
	if e, ok := errors.AsType[*weibo.Error](err); ok && e.Code == weibo.CodeForbidden {
		err = nil
		m.depts[did] = false
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m.depts[did] = true
	return true, nil
}
