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

// parseDeptUser parses the departmentId and userId arguments.
func parseDeptUser(deptID, userID string) (dept weibo.DeptID, user weibo.UserID, err error) {
	if dept, err = parseID[weibo.DeptID]("departmentId", deptID); err != nil {
		return dept, user, err
	}
	user, err = parseID[weibo.UserID]("userId", userID)
	return dept, user, err
}

// setUserDepartment is Mutation.setUserDepartment: user into departmentID
// (nil: out of any), when the viewer may — decided (Authz.Moves) against
// the department the user is in, which the move's write then expects
// (Members.SetGuarded with Authz.Guard).
func (r *Resolver) setUserDepartment(ctx context.Context, userID string, departmentID *string) (*weibo.User, error) {
	user, err := parseID[weibo.UserID]("userId", userID)
	if err != nil {
		return nil, err
	}
	dept, err := parseParentID("departmentId", departmentID)
	if err != nil {
		return nil, err
	}
	viewer := viewerOf(ctx)
	seen, err := r.Svc.Org.Authz.Moves(ctx, viewer, []weibo.UserID{user}, dept)
	if err != nil {
		return nil, err
	}
	if seen[0].Err != nil {
		return nil, seen[0].Err
	}
	// The move expects the department the decision was made against, and
	// decides again if a concurrent move put the user elsewhere.
	return r.Svc.Org.Members.SetGuarded(ctx, user, dept, r.Svc.Org.Authz.Guard(viewer, dept, seen[0]))
}

// moveDepartment is Mutation.moveDepartment: department id under parentID
// (nil: the top level), when the viewer may change both
// (Authz.Departments).
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

// departmentVisible reports whether the request's viewer sees department
// did's people (members, managers, who is in it): holders of
// MANAGE_DEPARTMENTS, and managers of its subtree
// (loaders.Loaders.DepartmentVisible, decided once per department and
// request).
func (r *Resolver) departmentVisible(ctx context.Context, did weibo.DeptID) (bool, error) {
	return loaders.For(ctx).DepartmentVisible(ctx, did)
}

// errDepartmentHidden is the FORBIDDEN error of a department's members
// asked by a viewer who may not see them.
var errDepartmentHidden = weibo.Forbidden("needs the permission " + string(org.PermManageDepartments) + " or management of the department")
