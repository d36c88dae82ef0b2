// Package authz authorizes the organisation's callers. A user's standing
// (org.Standing) is the union of the permissions of their roles and their
// rank, the highest priority among their assignments: RequirePermission
// (the schema's @hasPermission) and ActOn (the rank rule) read it from the
// user's family o and the rows of their roles, two round trips. HasRole
// and RequireRole (the older @hasRole) check one role by name.
// Departments and Memberships check org changes: holders of
// MANAGE_DEPARTMENTS may change the tree and move users they outrank, a
// manager of a department what lies in its subtree, whatever the ranks
// (package department). That check reads, in one GetMany, the viewer's
// family o (roles and managed departments) and the departments
// concerned, then, in a second, the roles named and every department on
// those departments' paths (org.Department.Path) — two round trips
// whatever the depth of the tree. A path that does not verify falls back
// to a walk up the tree (Tree).
//
// A membership's move is decided against the department the user is in
// (Moves), and the move's conditional write expects that department
// (Guard, membership.Service.SetGuarded): a concurrent move between the
// check and the write fails the write, and the next attempt decides
// again against the department the user is then in.
package authz

import (
	"bytes"
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Tree is what authorization reads of the department tree when a
// department's kept path does not verify (package department's Service
// implements it).
type Tree interface {
	// Ancestors returns d's ancestors, root first, excluding d.
	Ancestors(ctx context.Context, d *org.Department) ([]*org.Department, error)
}

// Service authorizes callers. It is safe for concurrent use.
type Service struct {
	st   hbase.Store
	tree Tree
}

// New returns the authorization over st, walking the tree through tree
// where a path does not verify.
func New(st hbase.Store, tree Tree) *Service { return &Service{st: st, tree: tree} }

// HasRole reports whether user uid holds the role named roleName: one Get
// of the name index, then one GetMany of the role row and the user's cell.
func (s *Service) HasRole(ctx context.Context, uid weibo.UserID, roleName string) (_ bool, err error) {
	defer weibo.Wrap(&err, "has role")
	key := tables.RoleNameKey(roleName)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
	if err != nil {
		return false, err
	}
	v := r.Value(tables.FamName, tables.ColRoleID)
	if v == nil {
		return false, nil
	}
	rid := tables.DecodeRoleID(v)
	rs, err := s.st.GetMany(ctx, []*hbase.Get{
		{Table: tables.Roles, Row: tables.RoleKey(rid), Families: []string{tables.FamInfo}},
		{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}},
	})
	if err != nil {
		return false, err
	}
	role := org.RoleFromRow(rid, rs[0])
	return role != nil && bytes.Equal(tables.RoleNameKey(role.Name), key) && rs[1].Value(tables.FamOrg, tables.RoleQualifier(rid)) != nil, nil
}

// RequireRole returns nil when uid holds the role named roleName and a
// FORBIDDEN *Error otherwise.
func (s *Service) RequireRole(ctx context.Context, uid weibo.UserID, roleName string) (err error) {
	defer weibo.Wrap(&err, "require role")
	ok, err := s.HasRole(ctx, uid, roleName)
	if err != nil {
		return err
	}
	if !ok {
		return org.ErrForbidden(roleName)
	}
	return nil
}

// scope is what one authorization read learned: the viewer's standing,
// whether they hold MANAGE_DEPARTMENTS, the standings of the users
// asked about, and for each department asked about whether the viewer
// manages it or one of its ancestors.
type scope struct {
	standing org.Standing
	depts    bool // the viewer holds MANAGE_DEPARTMENTS
	manager  bool // the viewer manages some department
	manages  map[weibo.DeptID]bool
	targets  []org.Standing
}

// refuse returns the FORBIDDEN error of a change touching did: to a viewer
// who manages nothing, the one of the missing permission.
func (sc scope) refuse(did weibo.DeptID) error {
	if !sc.manager {
		return org.ErrNeedsPermission(org.PermManageDepartments)
	}
	return errNotManager(did)
}

// may reports whether the scope allows a change touching did (RootDept:
// the top level, which only holders of MANAGE_DEPARTMENTS manage).
func (sc scope) may(did weibo.DeptID) bool {
	return sc.depts || sc.managesSubtree(did)
}

// managesSubtree reports whether the viewer manages did's subtree (never the
// top level).
func (sc scope) managesSubtree(did weibo.DeptID) bool {
	return did != weibo.RootDept && sc.manages[did]
}

// readScope reads the viewer's scope over dids, and the standings of the
// users whose family o are targets: one GetMany of the viewer's family o
// and the departments, then one of the roles named (the viewer's and the
// targets') and every department on those departments' paths.
func (s *Service) readScope(ctx context.Context, viewer weibo.UserID, dids []weibo.DeptID, targets []*hbase.Result) (scope, error) {
	sc := scope{manages: map[weibo.DeptID]bool{}}
	gets := []*hbase.Get{{Table: tables.Users, Row: tables.UserKey(viewer), Families: []string{tables.FamOrg}}}
	var asked []weibo.DeptID
	for _, did := range dids {
		if did != weibo.RootDept {
			asked = append(asked, did)
			gets = append(gets, &hbase.Get{Table: tables.Departments, Row: tables.DeptKey(did), Families: []string{tables.FamInfo}})
		}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return sc, err
	}
	viewerRow := rs[0]
	managed := map[weibo.DeptID]bool{}
	for _, did := range org.ManagedIn(viewerRow) {
		managed[did] = true
	}
	sc.manager = len(managed) > 0
	depts := make([]*org.Department, len(asked))
	var pathIDs []weibo.DeptID
	for i, did := range asked {
		if depts[i] = org.DepartmentFromRow(did, rs[1+i]); depts[i] != nil && depts[i].HasPath {
			pathIDs = append(pathIDs, depts[i].Path...)
		}
	}
	// Second round trip: the roles named and every ancestor named.
	roleIDs := roleIDs(nil, map[weibo.RoleID]bool{}, append([]*hbase.Result{viewerRow}, targets...)...)
	gets = roleGets(roleIDs)
	for _, id := range pathIDs {
		gets = append(gets, &hbase.Get{Table: tables.Departments, Row: tables.DeptKey(id), Families: []string{tables.FamInfo}})
	}
	// No second read when there is nothing to read (no roles, and
	// top-level departments have no path).
	rs = nil
	if len(gets) > 0 {
		if rs, err = s.st.GetMany(ctx, gets); err != nil {
			return sc, err
		}
	}
	roles := make(map[weibo.RoleID]*org.Role, len(roleIDs))
	for i, rid := range roleIDs {
		if role := org.RoleFromRow(rid, rs[i]); role != nil {
			roles[rid] = role
		}
	}
	rs = rs[len(roleIDs):]
	sc.standing = standingOf(viewerRow, roles)
	sc.depts = sc.standing.Perms.Has(org.PermManageDepartments)
	sc.targets = make([]org.Standing, len(targets))
	for i, t := range targets {
		sc.targets[i] = standingOf(t, roles)
	}
	if len(managed) == 0 {
		return sc, nil
	}
	byID := map[weibo.DeptID]*org.Department{}
	for i, id := range pathIDs {
		if d := org.DepartmentFromRow(id, rs[i]); d != nil {
			byID[id] = d
		}
	}
	for _, d := range depts {
		if d == nil {
			continue
		}
		if managed[d.ID] {
			sc.manages[d.ID] = true
			continue
		}
		up := make([]*org.Department, len(d.Path))
		for i, id := range d.Path {
			up[i] = byID[id]
		}
		if !d.HasPath || !org.VerifyChain(d, up) {
			if up, err = s.tree.Ancestors(ctx, d); err != nil {
				return sc, err
			}
		}
		for _, a := range up {
			if managed[a.ID] {
				sc.manages[d.ID] = true
				break
			}
		}
	}
	return sc, nil
}

// Departments returns nil when viewer may change departments
// dids — a holder of MANAGE_DEPARTMENTS, or a manager of each or of one
// of its ancestors (RootDept: the top level, MANAGE_DEPARTMENTS only) —
// and a FORBIDDEN *weibo.Error
// otherwise. Unknown departments are left to the change itself (NOT_FOUND
// there). Errors otherwise are the store's.
func (s *Service) Departments(ctx context.Context, viewer weibo.UserID, dids ...weibo.DeptID) (err error) {
	defer weibo.Wrap(&err, "authorize")
	sc, err := s.readScope(ctx, viewer, dids, nil)
	if err != nil {
		return err
	}
	for _, did := range dids {
		if !sc.may(did) {
			return sc.refuse(did)
		}
	}
	return nil
}

// Memberships returns, for each user of uids, nil when viewer may
// move them into department did (RootDept: into none), and a FORBIDDEN
// *weibo.Error otherwise: the verdicts of Moves. Unknown users
// are left to the change itself. Errors otherwise are the store's.
func (s *Service) Memberships(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) ([]error, error) {
	ds, err := s.Moves(ctx, viewer, uids, did)
	if err != nil {
		return nil, err
	}
	out := make([]error, len(ds))
	for i, d := range ds {
		out[i] = d.Err
	}
	return out, nil
}

// Moves decides, for each user of uids, whether viewer may move them
// into department did (RootDept: into none) — a manager of both the
// user's current department and did (their subtree scope, whatever the
// ranks), or a holder of MANAGE_DEPARTMENTS whom the rank rule lets act
// on the user (org.Standing.ActOn) —, and returns each decision with the
// department it was made against: one GetMany of the users' family o
// (departments and roles), then the reads of readScope. The move itself
// must expect that department (Guard), or the decision is stale. Unknown
// users are left to the change itself. Errors otherwise are the store's.
func (s *Service) Moves(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) (_ []org.MoveDecision, err error) {
	defer weibo.Wrap(&err, "authorize")
	rs, err := s.st.GetMany(ctx, userGets(uids))
	if err != nil {
		return nil, err
	}
	out := make([]org.MoveDecision, len(uids))
	dids := []weibo.DeptID{did}
	for i, r := range rs {
		out[i].User = uids[i]
		out[i].From = tables.UserDepartment(r)
		dids = append(dids, out[i].From)
	}
	sc, err := s.readScope(ctx, viewer, dids, rs)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Err = sc.move(out[i].From, did, sc.targets[i])
	}
	return out, nil
}

// Move decides whether viewer may move user uid, who is in department
// from, into did (RootDept: none, for either): nil or a FORBIDDEN
// *weibo.Error, as Moves decides, against from rather than the
// department the user is read in. Errors otherwise are the store's.
func (s *Service) Move(ctx context.Context, viewer, uid weibo.UserID, from, did weibo.DeptID) (err error) {
	defer weibo.Wrap(&err, "authorize")
	rs, err := s.st.GetMany(ctx, userGets([]weibo.UserID{uid}))
	if err != nil {
		return err
	}
	sc, err := s.readScope(ctx, viewer, []weibo.DeptID{did, from}, rs)
	if err != nil {
		return err
	}
	return sc.move(from, did, sc.targets[0])
}

// Guard returns the check of a move of one user by viewer into did that
// membership.Service.SetGuarded runs against the department each attempt
// expects: seen's verdict while the user is still in seen.From (no
// read), and a new decision (Move) once a concurrent move has put them
// elsewhere — so the move is never made on a decision about a department
// the user has left.
func (s *Service) Guard(viewer weibo.UserID, did weibo.DeptID, seen org.MoveDecision) org.MoveGuard {
	return func(ctx context.Context, from weibo.DeptID) error {
		if from == seen.From {
			return seen.Err
		}
		return s.Move(ctx, viewer, seen.User, from, did)
	}
}

// move is the scope's verdict on a move from department from into did of
// a user of standing target: a manager of both ends may (their subtree
// scope); otherwise the viewer needs MANAGE_DEPARTMENTS and the rank
// rule.
func (sc scope) move(from, did weibo.DeptID, target org.Standing) error {
	if sc.managesSubtree(did) && (from == did || sc.managesSubtree(from)) {
		return nil
	}
	switch {
	case !sc.may(did):
		return sc.refuse(did)
	case from != did && !sc.may(from):
		return sc.refuse(from)
	}
	return sc.standing.ActOn(target)
}

func errNotManager(did weibo.DeptID) error {
	if did == weibo.RootDept {
		return weibo.Forbidden("the top level of the department tree needs the permission " + string(org.PermManageDepartments))
	}
	return weibo.Forbidden("this change needs the permission " + string(org.PermManageDepartments) + " or management of department " + did.String())
}
