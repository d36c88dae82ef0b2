package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// parseParentID parses an optional department id argument: nil is
// weibo.RootDept (the top level, or no department).
func parseParentID(field string, s *string) (weibo.DeptID, error) {
	if s == nil {
		return weibo.RootDept, nil
	}
	return parseID[weibo.DeptID](field, *s)
}

// loadDepartment loads a department through the dataloader; RootDept and a
// missing department give nil.
func loadDepartment(ctx context.Context, id weibo.DeptID) (*org.Department, error) {
	if id == weibo.RootDept {
		return nil, nil
	}
	return loaders.For(ctx).Departments().Load(ctx, id)()
}

// authorizeMembership reports whether the viewer may put user into
// department dept (weibo.RootDept: out of any): nil, or the FORBIDDEN or
// NOT_FOUND error Org.AuthorizeMemberships gives.
func (r *Resolver) authorizeMembership(ctx context.Context, user weibo.UserID, dept weibo.DeptID) error {
	denied, err := r.Svc.Org.Authz.Memberships(ctx, viewerOf(ctx), []weibo.UserID{user}, dept)
	if err != nil {
		return err
	}
	return denied[0]
}

// parseDeptUser parses the departmentId and userId arguments.
func parseDeptUser(deptID, userID string) (dept weibo.DeptID, user weibo.UserID, err error) {
	if dept, err = parseID[weibo.DeptID]("departmentId", deptID); err != nil {
		return dept, user, err
	}
	user, err = parseID[weibo.UserID]("userId", userID)
	return dept, user, err
}

// setUserDepartment is Mutation.setUserDepartment: user into departmentID
// (nil: out of any), when the viewer may.
func (r *Resolver) setUserDepartment(ctx context.Context, userID string, departmentID *string) (*weibo.User, error) {
	user, err := parseID[weibo.UserID]("userId", userID)
	if err != nil {
		return nil, err
	}
	dept, err := parseParentID("departmentId", departmentID)
	if err != nil {
		return nil, err
	}
	if err := r.authorizeMembership(ctx, user, dept); err != nil {
		return nil, err
	}
	return r.Svc.Org.Members.Set(ctx, user, dept)
}

// moveDepartment is Mutation.moveDepartment: department id under parentID
// (nil: the top level), when the viewer administers both.
func (r *Resolver) moveDepartment(ctx context.Context, id string, parentID *string) (*org.Department, error) {
	dept, err := parseID[weibo.DeptID]("id", id)
	if err != nil {
		return nil, err
	}
	parent, err := parseParentID("parentId", parentID)
	if err != nil {
		return nil, err
	}
	if err := r.Svc.Org.Authz.Departments(ctx, viewerOf(ctx), dept, parent); err != nil {
		return nil, err
	}
	return r.Svc.Org.Departments.Move(ctx, dept, parent)
}
