// Package bulk makes the organisation's bulk changes: one role given to or
// taken from many users, many users moved into one department. Each
// user's change is the single change of package role or membership, made
// on its own (a few at once); one user's failure does not stop the others
// and is reported in the org.BulkResult.
package bulk

import (
	"context"
	"errors"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// Roles is what bulk changes need of the roles (package role's Service
// implements it).
type Roles interface {
	// Existing reads role rid; NOT_FOUND when there is none.
	Existing(ctx context.Context, rid weibo.RoleID) (*org.Role, error)
	// Assign gives user uid the role rid with priority.
	Assign(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, priority int) (*weibo.User, error)
	// Revoke takes role rid from user uid.
	Revoke(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) (*weibo.User, error)
}

// Departments is what bulk changes read of the department tree (package
// department's Service implements it).
type Departments interface {
	// Existing reads department did; NOT_FOUND on field when there is none.
	Existing(ctx context.Context, field string, did weibo.DeptID) (*org.Department, error)
}

// Memberships changes a user's department (package membership's Service
// implements it).
type Memberships interface {
	// Set puts user uid into department did (RootDept: into none).
	Set(ctx context.Context, uid weibo.UserID, did weibo.DeptID) (*weibo.User, error)
	// SetGuarded is Set when guard allows the move from the department
	// the user is in, as the move's write expects it.
	SetGuarded(ctx context.Context, uid weibo.UserID, did weibo.DeptID, guard org.MoveGuard) (*weibo.User, error)
}

// Authorizer decides which users' moves a viewer may make (package authz's
// Service implements it).
type Authorizer interface {
	// Moves decides, per user of uids, whether viewer may move them into
	// did, against the department each user is in.
	Moves(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) ([]org.MoveDecision, error)
	// Guard is the check of one such move against the department its
	// write expects: seen's verdict, or a new decision.
	Guard(viewer weibo.UserID, did weibo.DeptID, seen org.MoveDecision) org.MoveGuard
	// Assignments decides a change of role rid for uids by viewer: the
	// call's refusal, or each user's (nil: allowed).
	Assignments(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority *int) ([]error, error)
}

// Service makes bulk changes. It is safe for concurrent use.
type Service struct {
	log     *slog.Logger
	roles   Roles
	depts   Departments
	members Memberships
	authz   Authorizer
}

// New returns the bulk changes over the parts given, logging store
// failures of single users to log.
func New(log *slog.Logger, roles Roles, depts Departments, members Memberships, authz Authorizer) *Service {
	return &Service{log: log, roles: roles, depts: depts, members: members, authz: authz}
}

// bulkParallel bounds the users of one bulk change changed at once.
const bulkParallel = 8

// checkBulk validates the users of a bulk change: 1 to org.MaxBulkUsers, and
// returns them without repeats, in the order given.
func checkBulk(uids []weibo.UserID) ([]weibo.UserID, error) {
	if len(uids) == 0 || len(uids) > org.MaxBulkUsers {
		return nil, weibo.BadInput("userIds", "userIds must name 1 to %d users, got %d", org.MaxBulkUsers, len(uids))
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

// run runs change for every user of uids (bulkParallel at once) unless
// denied[i] refuses user i, and collects the outcome; failures that are
// not *weibo.Error values are logged and reported as org.CodeInternal.
func (s *Service) run(ctx context.Context, uids []weibo.UserID, denied []error, change func(ctx context.Context, uid weibo.UserID) (*weibo.User, error)) *org.BulkResult {
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
	res := &org.BulkResult{Succeeded: []*weibo.User{}, Failed: []org.BulkFailure{}}
	for i, uid := range uids {
		if errs[i] == nil {
			res.Succeeded = append(res.Succeeded, users[i])
			continue
		}
		f := org.BulkFailure{UserID: uid, Code: org.CodeInternal, Message: "internal error"}
		if e, ok := errors.AsType[*weibo.Error](errs[i]); ok {
			f.Code, f.Message = e.Code, e.Message
		} else {
			s.log.ErrorContext(ctx, "bulk change: internal error", "user", uid.String(), "err", errs[i])
		}
		res.Failed = append(res.Failed, f)
	}
	return res
}

// AssignRole gives each user of uids (1 to org.MaxBulkUsers, repeats
// ignored) the role rid with priority, each as role.Service.Assign does
// (the same counted write), unauthorized (the command line's; AssignRoleBy
// is a viewer's). Errors for the whole call: BAD_USER_INPUT for too many
// or no users or a priority out of range, NOT_FOUND for an unknown role;
// each user's own failure is in the result.
func (s *Service) AssignRole(ctx context.Context, uids []weibo.UserID, rid weibo.RoleID, priority int) (*org.BulkResult, error) {
	return s.AssignRoleBy(ctx, 0, uids, rid, priority)
}

// AssignRoleBy is AssignRole made by viewer (0: unauthorized): the call
// is first authorized (authz.Service.Assignments) — FORBIDDEN for the
// whole call when the role grants a permission the viewer lacks or the
// priority is not below the viewer's rank, and a FORBIDDEN failure for
// each user the viewer does not outrank.
func (s *Service) AssignRoleBy(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority int) (_ *org.BulkResult, err error) {
	defer weibo.Wrapf(&err, "assign role %s to %d users", rid, len(uids))
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if err := org.CheckPriority(priority); err != nil {
		return nil, err
	}
	if _, err := s.roles.Existing(ctx, rid); err != nil {
		return nil, err
	}
	denied, err := s.authorize(ctx, viewer, uids, rid, &priority)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, uids, denied, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.roles.Assign(ctx, uid, rid, priority)
	}), nil
}

// RevokeRole takes role rid from each user of uids, each as
// role.Service.Revoke does, unauthorized. Errors as for AssignRole.
func (s *Service) RevokeRole(ctx context.Context, uids []weibo.UserID, rid weibo.RoleID) (*org.BulkResult, error) {
	return s.RevokeRoleBy(ctx, 0, uids, rid)
}

// RevokeRoleBy is RevokeRole made by viewer (0: unauthorized), authorized
// as AssignRoleBy is, without the priority.
func (s *Service) RevokeRoleBy(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID) (_ *org.BulkResult, err error) {
	defer weibo.Wrapf(&err, "revoke role %s from %d users", rid, len(uids))
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if _, err := s.roles.Existing(ctx, rid); err != nil {
		return nil, err
	}
	denied, err := s.authorize(ctx, viewer, uids, rid, nil)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, uids, denied, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.roles.Revoke(ctx, uid, rid)
	}), nil
}

// authorize is Authorizer.Assignments for a viewer, nothing for 0.
func (s *Service) authorize(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority *int) ([]error, error) {
	if viewer == 0 {
		return nil, nil
	}
	return s.authz.Assignments(ctx, viewer, uids, rid, priority)
}

// SetDepartment puts each user of uids into department did (RootDept:
// into none), each as membership.Service.Set does. With viewer non-zero,
// each user's move is first authorized (authz.Service.Moves: a manager of
// both ends, or a holder of MANAGE_DEPARTMENTS who outranks the user) and refused users are failures (FORBIDDEN); an
// allowed move expects the department its decision was made against and
// is decided again if a concurrent move put the user elsewhere
// (membership.Service.SetGuarded with authz.Service.Guard). Errors
// for the whole call: BAD_USER_INPUT for too many or no users, NOT_FOUND
// for an unknown department.
func (s *Service) SetDepartment(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) (_ *org.BulkResult, err error) {
	defer weibo.Wrapf(&err, "set the department of %d users to %s", len(uids), did)
	if uids, err = checkBulk(uids); err != nil {
		return nil, err
	}
	if did != weibo.RootDept {
		if _, err := s.depts.Existing(ctx, "departmentId", did); err != nil {
			return nil, err
		}
	}
	if viewer == 0 {
		return s.run(ctx, uids, nil, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
			return s.members.Set(ctx, uid, did)
		}), nil
	}
	seen, err := s.authz.Moves(ctx, viewer, uids, did)
	if err != nil {
		return nil, err
	}
	denied := make([]error, len(uids))
	guards := make(map[weibo.UserID]org.MoveGuard, len(uids))
	for i, uid := range uids {
		denied[i] = seen[i].Err
		guards[uid] = s.authz.Guard(viewer, did, seen[i])
	}
	return s.run(ctx, uids, denied, func(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
		return s.members.SetGuarded(ctx, uid, did, guards[uid])
	}), nil
}
