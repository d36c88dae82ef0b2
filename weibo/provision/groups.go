package provision

import (
	"context"
	"errors"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// group names one department or role.
type group struct {
	kind GroupKind
	dept weibo.DeptID
	role weibo.RoleID
}

// parseGroup parses a group id ("department:N", "role:N"); NOT_FOUND for
// anything else.
func parseGroup(id string) (group, error) {
	n, err := weibo.ParseNodeID(id)
	switch {
	case err != nil:
	case n.Kind == weibo.NodeDepartment && n.Dept != weibo.RootDept:
		return group{kind: KindDepartment, dept: n.Dept}, nil
	case n.Kind == weibo.NodeRole:
		return group{kind: KindRole, role: n.Role}, nil
	}
	return group{}, weibo.NotFound("group %q not found", id)
}

func (g group) node() weibo.NodeID {
	if g.kind == KindRole {
		return org.RoleNode(g.role)
	}
	return org.DeptNode(g.dept)
}

func (g group) id() uint64 {
	if g.kind == KindRole {
		return uint64(g.role)
	}
	return uint64(g.dept)
}

// table and row of the group's row.
func (g group) row() (string, []byte) {
	if g.kind == KindRole {
		return tables.Roles, tables.RoleKey(g.role)
	}
	return tables.Departments, tables.DeptKey(g.dept)
}

// indexKind is the group's kind in the externalId index.
func (g group) indexKind() byte {
	if g.kind == KindRole {
		return 'r'
	}
	return 'd'
}

// nameQualifier is the qualifier of the group's name.
func (g group) nameQualifier() string {
	if g.kind == KindRole {
		return tables.ColRoleName
	}
	return tables.ColDeptName
}

// memberPrefix is the prefix of the group's member rows.
func (g group) memberPrefix() []byte {
	if g.kind == KindRole {
		return tables.RoleMemberPrefix(g.role)
	}
	return tables.DeptMemberPrefix(g.dept)
}

// scimField renames the organisation's argument names in err to the
// SCIM attributes they are.
func scimField(err error) error {
	if e, ok := errors.AsType[*weibo.Error](err); ok {
		switch e.Field {
		case "name":
			e.Field = "displayName"
		case "parentId":
			e.Field = "parent"
		}
	}
	return err
}

// checkedGroup is a group input checked: its cleaned name, parent and
// priority.
type checkedGroup struct {
	name     *string
	ext      *string
	parent   *weibo.DeptID
	priority *int
}

// checkChange validates ch for group kind kind.
func checkChange(kind GroupKind, ch GroupChange) (checkedGroup, error) {
	var out checkedGroup
	if ch.DisplayName != nil {
		max := org.MaxDepartmentNameLength
		if kind == KindRole {
			max = org.MaxRoleNameLength
		}
		name, err := org.CleanName("displayName", *ch.DisplayName, max)
		if err != nil {
			return out, err
		}
		out.name = &name
	}
	if ch.ExternalID != nil {
		if err := checkExternalID(*ch.ExternalID); err != nil {
			return out, err
		}
		out.ext = ch.ExternalID
	}
	if ch.Parent != nil {
		if kind == KindRole {
			if *ch.Parent != "" {
				return out, weibo.BadInput("parent", "a role group has no parent")
			}
		} else {
			did := weibo.RootDept
			if *ch.Parent != "" {
				p, err := parseGroup(*ch.Parent)
				if err != nil || p.kind != KindDepartment {
					return out, weibo.BadInput("parent", "parent must be a department group's id")
				}
				did = p.dept
			}
			out.parent = &did
		}
	}
	if ch.Priority != nil {
		if kind != KindRole {
			if *ch.Priority != 0 {
				return out, weibo.BadInput("priority", "a department group has no priority")
			}
		} else {
			if err := org.CheckPriority(*ch.Priority); err != nil {
				return out, err
			}
			out.priority = ch.Priority
		}
	}
	return out, nil
}

// kindOf is in's kind, department by default; BAD_USER_INPUT for another.
func kindOf(k GroupKind) (GroupKind, error) {
	switch k {
	case "", KindDepartment:
		return KindDepartment, nil
	case KindRole:
		return KindRole, nil
	}
	return "", weibo.BadInput("kind", "kind must be department or role")
}

// CreateGroup creates a department or role for client c, with its
// members, and returns it with them. Errors: BAD_USER_INPUT on the
// attribute at fault (reason ROLE_NAME_TAKEN for a role's taken name;
// DEPARTMENT_TOO_DEEP; "members" for a user that does not exist);
// NOT_FOUND for an unknown parent (field "parent"); FORBIDDEN by the rank
// rule (checked for every member before any write); the store's.
//
// Writes, in order: the department or role (its service's create); the
// externalId index row; the group's SCIM cells with CheckAndPut (absent
// version): version 1, from then on the group is found by its
// externalId; each member's counted write. A crash part-way leaves a
// group with fewer members, which the client's next sync completes.
func (s *Service) CreateGroup(ctx context.Context, c Client, in GroupInput) (_ *Group, err error) {
	defer weibo.Wrap(&err, "provision a group")
	ctx = clientContext(ctx, c)
	kind, err := kindOf(in.Kind)
	if err != nil {
		return nil, err
	}
	ch := GroupChange{DisplayName: &in.DisplayName, ExternalID: &in.ExternalID, Parent: &in.Parent}
	prio := in.Priority
	if kind == KindRole && prio == 0 {
		prio = DefaultPriority
	}
	ch.Priority = &prio
	cg, err := checkChange(kind, ch)
	if err != nil {
		return nil, err
	}
	add := dedupe(in.Members, nil)
	if err := s.checkMembers(ctx, add); err != nil {
		return nil, err
	}
	g := group{kind: kind}
	if kind == KindRole {
		if _, err := s.Authz.AssignmentsAs(ctx, standing(c), nil, 0, &prio); err != nil {
			return nil, err
		}
	}
	if err := s.actOn(ctx, c, add...); err != nil {
		return nil, err
	}
	if kind == KindRole {
		r, err := s.Roles.Create(ctx, *cg.name)
		if err != nil {
			return nil, scimField(err)
		}
		g.role = r.ID
	} else {
		d, err := s.Departments.Create(ctx, *cg.name, *cg.parent)
		if err != nil {
			return nil, scimField(err)
		}
		g.dept = d.ID
	}
	now := s.w.NowMillis()
	if in.ExternalID != "" {
		if err := s.putIndex(ctx, g.indexKind(), in.ExternalID, g.id(), now); err != nil {
			return nil, err
		}
		if err := s.w.Step(ctx, StepIndexed); err != nil {
			return nil, err
		}
	}
	cells := map[string][]byte{tables.ColExternalID: []byte(in.ExternalID), tables.ColProvisionedBy: []byte(c.Name),
		tables.ColScimModified: tables.EncodeMillis(now), tables.ColScimVersion: tables.U64(1)}
	if kind == KindRole {
		cells[tables.ColScimPriority] = tables.EncodePriority(prio)
	}
	table, row := g.row()
	if _, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: table, Row: row, Values: hbase.Values{tables.FamInfo: cells}},
		tables.FamInfo, tables.ColScimVersion, nil); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, StepWritten); err != nil {
		return nil, err
	}
	if err := s.applyMembers(ctx, g, prio, add, nil); err != nil {
		return nil, err
	}
	return s.getGroup(ctx, g, true)
}

// checkMembers refuses (BAD_USER_INPUT on "members") a user that does
// not exist or is closed.
func (s *Service) checkMembers(ctx context.Context, uids []weibo.UserID) error {
	if len(uids) == 0 {
		return nil
	}
	us, err := s.users(ctx, uids)
	if err != nil {
		return err
	}
	for i, u := range us {
		if u == nil {
			return weibo.BadInput("members", "user %s not found", uids[i])
		}
	}
	return nil
}

// dedupe returns uids without repeats and without those of minus, in
// order.
func dedupe(uids, minus []weibo.UserID) []weibo.UserID {
	seen := map[weibo.UserID]bool{}
	for _, u := range minus {
		seen[u] = true
	}
	out := []weibo.UserID{}
	for _, u := range uids {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// errNotIn is the guard's refusal of a department leave of a user not in
// the department: nothing to do. A refusal (NOT_FOUND), so that the
// leave's pending audit event is abandoned.
var errNotIn = &weibo.Error{Code: weibo.CodeNotFound, Message: "the user is not in the department"}

// applyMembers makes g's member changes: each user of remove leaves (a
// department: only when in it), each of add joins (a role: with
// priority); each is one counted write of its relation.
func (s *Service) applyMembers(ctx context.Context, g group, priority int, add, remove []weibo.UserID) error {
	for _, uid := range remove {
		var err error
		if g.kind == KindRole {
			_, err = s.Roles.Revoke(ctx, uid, g.role)
		} else {
			_, err = s.Members.SetGuarded(ctx, uid, weibo.RootDept, func(_ context.Context, from weibo.DeptID) error {
				if from != g.dept {
					return errNotIn
				}
				return nil
			})
			if errors.Is(err, errNotIn) {
				err = nil
			}
		}
		if err != nil && weibo.CodeOf(err) != weibo.CodeNotFound {
			return err
		}
	}
	for _, uid := range add {
		var err error
		if g.kind == KindRole {
			_, err = s.Roles.Assign(ctx, uid, g.role, priority)
		} else {
			_, err = s.Members.Set(ctx, uid, g.dept)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ReplaceGroup sets every attribute of group id to in for client c: its
// members become exactly in.Members. Errors: PatchGroup's, and
// BAD_USER_INPUT (reason IMMUTABLE, field "kind") for another kind.
func (s *Service) ReplaceGroup(ctx context.Context, c Client, id string, in GroupInput, ifVersion *int64) (_ *Group, err error) {
	g, err := parseGroup(id)
	if err != nil {
		return nil, err
	}
	if in.Kind != "" && in.Kind != g.kind {
		return nil, weibo.BadReason("kind", weibo.ReasonImmutable, "a group's kind never changes")
	}
	ch := GroupChange{DisplayName: &in.DisplayName, ExternalID: &in.ExternalID, Parent: &in.Parent, Add: in.Members, RemoveAll: true}
	if g.kind == KindRole {
		p := in.Priority
		if p == 0 {
			p = DefaultPriority
		}
		ch.Priority = &p
	} else if in.Priority != 0 {
		ch.Priority = &in.Priority
	}
	return s.PatchGroup(ctx, c, id, ch, ifVersion)
}

// PatchGroup changes group id for client c as ch says and returns it
// with its members. Errors: NOT_FOUND for an unknown group;
// BAD_USER_INPUT on the attribute at fault (reasons VERSION_MISMATCH,
// ROLE_NAME_TAKEN, DEPARTMENT_CYCLE, DEPARTMENT_TOO_DEEP; "members" for a
// user that does not exist); FORBIDDEN by the rank rule, checked for the
// whole request before any write; the store's.
//
// Writes, in order: a new externalId's index row; the group's SCIM cells
// with CheckAndPut on the version read (version+1); the rename and the
// move (their services'); the old index row's delete; each member's
// counted write (removes, adds, and for a new priority the current
// members assigned again); the version's Increment when members changed
// (with ifVersion, the versioned write of the cells, made first even for
// a change of members alone, is the change's one version step).
func (s *Service) PatchGroup(ctx context.Context, c Client, id string, ch GroupChange, ifVersion *int64) (_ *Group, err error) {
	defer weibo.Wrapf(&err, "change group %s", id)
	ctx = clientContext(ctx, c)
	g, err := parseGroup(id)
	if err != nil {
		return nil, err
	}
	cg, err := checkChange(g.kind, ch)
	if err != nil {
		return nil, err
	}
	r, err := s.readGroup(ctx, g)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, weibo.NotFound("group %s not found", id)
	}
	_, version := versionOf(r)
	if err := checkVersion(ifVersion, version); err != nil {
		return nil, err
	}
	cur := groupOf(g, r)
	prio := cur.Priority
	newPrio := prio
	if cg.priority != nil {
		newPrio = *cg.priority
	}
	add := dedupe(ch.Add, nil)
	remove := dedupe(ch.Remove, add)
	var reassign []weibo.UserID
	if ch.RemoveAll || newPrio != prio {
		ms, _, err := s.members(ctx, g)
		if err != nil {
			return nil, err
		}
		in := map[weibo.UserID]bool{}
		for _, u := range add {
			in[u] = true
		}
		for _, m := range ms {
			switch {
			case in[m.ID]:
			case ch.RemoveAll:
				remove = append(remove, m.ID)
			case newPrio != prio && !slices.Contains(remove, m.ID):
				reassign = append(reassign, m.ID)
			}
		}
	}
	if err := s.checkMembers(ctx, add); err != nil {
		return nil, err
	}
	targets := slices.Concat(add, remove, reassign)
	if g.kind == KindRole {
		var p *int
		if len(add)+len(reassign) > 0 || newPrio != prio {
			p = &newPrio
		}
		errs, err := s.Authz.AssignmentsAs(ctx, standing(c), targets, g.role, p)
		if err != nil {
			return nil, err
		}
		if err := errors.Join(errs...); err != nil {
			return nil, firstErr(errs)
		}
	} else if err := s.actOn(ctx, c, targets...); err != nil {
		return nil, err
	}
	memberChange := len(add)+len(remove)+len(reassign) > 0
	// With ifVersion, the versioned write claims the whole change before
	// any member's write; without, member changes Increment the version
	// after them.
	claimed := false
	if cg.name != nil || cg.ext != nil || cg.parent != nil || cg.priority != nil || (ifVersion != nil && memberChange) {
		if err := s.changeCells(ctx, c, g, cg, ifVersion); err != nil {
			return nil, err
		}
		claimed = ifVersion != nil
	}
	if memberChange {
		if err := s.applyMembers(ctx, g, newPrio, slices.Concat(add, reassign), remove); err != nil {
			return nil, err
		}
		if err := s.w.Step(ctx, StepMembers); err != nil {
			return nil, err
		}
		if claimed {
			return s.getGroup(ctx, g, true)
		}
		table, row := g.row()
		if _, err := s.st.Increment(ctx, &hbase.Increment{Table: table, Row: row, Family: tables.FamInfo, Qualifier: tables.ColScimVersion, Amount: 1}); err != nil {
			return nil, err
		}
		if err := s.st.Put(ctx, &hbase.Put{Table: table, Row: row, Values: hbase.Values{tables.FamInfo: {
			tables.ColScimModified: tables.EncodeMillis(s.w.NowMillis())}}}); err != nil {
			return nil, err
		}
	}
	return s.getGroup(ctx, g, true)
}

// firstErr is the first non-nil of errs.
func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// changeCells writes the group's SCIM cells and makes its rename and
// move: the new index row, the cells with CheckAndPut on the version
// read (lost: VERSION_MISMATCH with ifVersion, otherwise read again and
// retried), the rename, the move, the old index row's delete.
func (s *Service) changeCells(ctx context.Context, c Client, g group, cg checkedGroup, ifVersion *int64) error {
	table, row := g.row()
	for attempt := 0; ; attempt++ {
		r, err := s.readGroup(ctx, g)
		if err != nil {
			return err
		}
		if r == nil {
			return weibo.NotFound("group %s not found", g.node())
		}
		raw, version := versionOf(r)
		if err := checkVersion(ifVersion, version); err != nil {
			return err
		}
		now := s.w.NowMillis()
		oldExt := text(r, tables.ColExternalID)
		cells := map[string][]byte{tables.ColScimModified: tables.EncodeMillis(now), tables.ColScimVersion: tables.U64(uint64(version + 1))}
		if r.Value(tables.FamInfo, tables.ColProvisionedBy) == nil {
			cells[tables.ColProvisionedBy] = []byte(c.Name)
		}
		newExt := cg.ext != nil && *cg.ext != oldExt
		if cg.ext != nil {
			cells[tables.ColExternalID] = []byte(*cg.ext)
			if newExt && *cg.ext != "" {
				if err := s.putIndex(ctx, g.indexKind(), *cg.ext, g.id(), now); err != nil {
					return err
				}
				if err := s.w.Step(ctx, StepIndexed); err != nil {
					return err
				}
			}
		}
		if cg.priority != nil {
			cells[tables.ColScimPriority] = tables.EncodePriority(*cg.priority)
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: table, Row: row, Values: hbase.Values{tables.FamInfo: cells}},
			tables.FamInfo, tables.ColScimVersion, raw)
		if err != nil {
			return err
		}
		if !ok {
			if newExt {
				_ = s.settleIndex(context.WithoutCancel(ctx), g.indexKind(), *cg.ext, g.id(), table, row)
			}
			if ifVersion != nil {
				return errVersion(version + 1)
			}
			if attempt == maxAttempts {
				return org.ErrConcurrent("version", "the group keeps changing; retry")
			}
			continue
		}
		if err := s.w.Step(ctx, StepWritten); err != nil {
			return err
		}
		if cg.name != nil && *cg.name != text(r, g.nameQualifier()) {
			if g.kind == KindRole {
				_, err = s.Roles.Rename(ctx, g.role, *cg.name)
			} else {
				_, err = s.Departments.Rename(ctx, g.dept, *cg.name)
			}
			if err != nil {
				return scimField(err)
			}
		}
		if cg.parent != nil && g.kind == KindDepartment && *cg.parent != tables.DepartmentParent(r) {
			if _, err := s.Departments.Move(ctx, g.dept, *cg.parent); err != nil {
				return scimField(err)
			}
		}
		if newExt {
			for _, ext := range []string{*cg.ext, oldExt} {
				if err := s.settleIndex(ctx, g.indexKind(), ext, g.id(), table, row); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// DeleteGroup deletes group id for client c: a role with its
// assignments (its service's delete), a department only when it has no
// sub-department and no member. Errors: NOT_FOUND; BAD_USER_INPUT
// (reasons VERSION_MISMATCH, DEPARTMENT_NOT_EMPTY); FORBIDDEN by the rank
// rule (a role's members, its permissions); the store's.
func (s *Service) DeleteGroup(ctx context.Context, c Client, id string, ifVersion *int64) (err error) {
	defer weibo.Wrapf(&err, "delete group %s", id)
	ctx = clientContext(ctx, c)
	g, err := parseGroup(id)
	if err != nil {
		return err
	}
	r, err := s.readGroup(ctx, g)
	if err != nil {
		return err
	}
	if r == nil {
		return weibo.NotFound("group %s not found", id)
	}
	_, version := versionOf(r)
	if err := checkVersion(ifVersion, version); err != nil {
		return err
	}
	ext := text(r, tables.ColExternalID)
	if g.kind == KindRole {
		ms, _, err := s.members(ctx, g)
		if err != nil {
			return err
		}
		uids := make([]weibo.UserID, len(ms))
		for i, m := range ms {
			uids[i] = m.ID
		}
		errs, err := s.Authz.AssignmentsAs(ctx, standing(c), uids, g.role, nil)
		if err != nil {
			return err
		}
		if err := firstErr(errs); err != nil {
			return err
		}
		if _, err := s.Roles.Delete(ctx, g.role); err != nil {
			return scimField(err)
		}
	} else if _, err := s.Departments.Delete(ctx, g.dept, false); err != nil {
		return scimField(err)
	}
	if ext != "" {
		return s.deleteIndex(ctx, g.indexKind(), ext, g.id())
	}
	return nil
}
