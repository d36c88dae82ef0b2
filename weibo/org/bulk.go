package org

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/weibo"
)

// MaxBulkUsers is the most users one bulk change takes.
const MaxBulkUsers = 100

// bulkParallel bounds the users of one bulk change changed at once.
const bulkParallel = 8

// BulkFailure is one user's failure in a bulk change.
type BulkFailure struct {
	// UserID is the user.
	UserID weibo.UserID
	// Code is the error's code (a weibo.Code* constant), or
	// CodeInternal for a store failure.
	Code string
	// Message explains it.
	Message string
}

// CodeInternal is a BulkFailure's code for a failure that is not the
// caller's (the store's); the message then says no more.
const CodeInternal = "INTERNAL_SERVER_ERROR"

// BulkResult is the outcome of a bulk change: each user's change is made on
// its own, and one user's failure does not stop the others.
type BulkResult struct {
	// Succeeded are the users changed (or already as asked), in the order given.
	Succeeded []*weibo.User
	// Failed are the users not changed, in the order given.
	Failed []BulkFailure
}

// checkBulk validates the users of a bulk change: 1 to MaxBulkUsers, and
// returns them without repeats, in the order given.
func checkBulk(uids []weibo.UserID) ([]weibo.UserID, error) {
	if len(uids) == 0 || len(uids) > MaxBulkUsers {
		return nil, weibo.BadInput("userIds", "userIds must name 1 to %d users, got %d", MaxBulkUsers, len(uids))
	}
	seen := make(map[weibo.UserID]bool, len(uids))
	out := make([]weibo.UserID, 0, len(uids))
	for _, u := range uids {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out, nil
}

// bulk runs change for every user of uids (bulkParallel at once) unless
// denied[i] refuses user i, and collects the outcome; failures that are
// not *weibo.Error values are logged and reported as CodeInternal.
func (s *Service) bulk(ctx context.Context, uids []weibo.UserID, denied []error, change func(ctx context.Context, uid weibo.UserID) (*weibo.User, error)) *BulkResult {
	users := make([]*weibo.User, len(uids))
	errs := make([]error, len(uids))
	var g errgroup.Group
	g.SetLimit(bulkParallel)
	for i, uid := range uids {
		if denied != nil && denied[i] != nil {
			errs[i] = denied[i]
			continue
		}
		g.Go(func() error {
			users[i], errs[i] = change(ctx, uid)
			return nil
		})
	}
	_ = g.Wait()
	res := &BulkResult{Succeeded: []*weibo.User{}, Failed: []BulkFailure{}}
	for i, uid := range uids {
		if errs[i] == nil {
			res.Succeeded = append(res.Succeeded, users[i])
			continue
		}
		f := BulkFailure{UserID: uid, Code: CodeInternal, Message: "internal error"}
		if e, ok := errors.AsType[*weibo.Error](errs[i]); ok {
			f.Code, f.Message = e.Code, e.Message
		} else {
			s.log.ErrorContext(ctx, "bulk change: internal error", "user", uid.String(), "err", errs[i])
		}
		res.Failed = append(res.Failed, f)
	}
	return res
}

// AssignRoleToUsers gives each user of uids (1 to MaxBulkUsers, repeats
// ignored) the role rid with priority, each as AssignRole does (the same
// counted write). Errors for the whole call: BAD_USER_INPUT for too many
// or no users or a priority out of range, NOT_FOUND for an unknown role;
// each user's own failure is in the result.
func (s *Service) AssignRoleToUsers(ctx context.Context, uids []weibo.UserID, rid weibo.RoleID, priority int) (_ *BulkResult, err error) {
	defer weibo.Wrapf(&err, "assign role %s to %d users", rid, len(uids))
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if err := checkPriority(priority); err != nil {
		return nil, err
	}
	if _, err := s.existingRole(ctx, rid); err != nil {
		return nil, err
	}
	return s.bulk(ctx, uids, nil, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.AssignRole(ctx, uid, rid, priority)
	}), nil
}

// RevokeRoleFromUsers takes role rid from each user of uids, each as
// RevokeRole does. Errors as for AssignRoleToUsers.
func (s *Service) RevokeRoleFromUsers(ctx context.Context, uids []weibo.UserID, rid weibo.RoleID) (_ *BulkResult, err error) {
	defer weibo.Wrapf(&err, "revoke role %s from %d users", rid, len(uids))
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if _, err := s.existingRole(ctx, rid); err != nil {
		return nil, err
	}
	return s.bulk(ctx, uids, nil, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.RevokeRole(ctx, uid, rid)
	}), nil
}

// SetUsersDepartment puts each user of uids into department did (RootDept:
// into none), each as SetUserDepartment does. With viewer non-zero, each
// user's move is first authorized (AuthorizeMemberships: an admin, or a
// manager of both ends) and refused users are failures (FORBIDDEN). Errors
// for the whole call: BAD_USER_INPUT for too many or no users, NOT_FOUND
// for an unknown department.
func (s *Service) SetUsersDepartment(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) (_ *BulkResult, err error) {
	defer weibo.Wrapf(&err, "set the department of %d users to %s", len(uids), did)
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if did != weibo.RootDept {
		if _, err := s.existingDepartment(ctx, "departmentId", did); err != nil {
			return nil, err
		}
	}
	var denied []error
	if viewer != 0 {
		if denied, err = s.AuthorizeMemberships(ctx, viewer, uids, did); err != nil {
			return nil, err
		}
	}
	return s.bulk(ctx, uids, denied, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.SetUserDepartment(ctx, uid, did)
	}), nil
}
