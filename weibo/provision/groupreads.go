package provision

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// readGroup reads the group's row (family i); nil when it does not exist.
func (s *Service) readGroup(ctx context.Context, g group) (*hbase.Result, error) {
	table, row := g.row()
	r, err := s.st.Get(ctx, &hbase.Get{Table: table, Row: row, Families: []string{tables.FamInfo}})
	if err != nil || r.Value(tables.FamInfo, g.nameQualifier()) == nil {
		return nil, err
	}
	return r, nil
}

// groupOf decodes group g from its row r.
func groupOf(g group, r *hbase.Result) *Group {
	out := &Group{
		ID:            g.node().String(),
		Kind:          g.kind,
		DisplayName:   text(r, g.nameQualifier()),
		ExternalID:    text(r, tables.ColExternalID),
		Created:       time.UnixMilli(tables.CreatedAt(r)),
		Modified:      modifiedOf(r),
		ProvisionedBy: text(r, tables.ColProvisionedBy),
	}
	_, out.Version = versionOf(r)
	if g.kind == KindRole {
		out.Priority = rolePriority(r)
	} else if p := tables.DepartmentParent(r); p != weibo.RootDept {
		out.Parent = org.DeptNode(p).String()
	}
	return out
}

// rolePriority is the priority a role group gives its members.
func rolePriority(r *hbase.Result) int {
	if p, ok := tables.DecodePriority(r.Value(tables.FamInfo, tables.ColScimPriority)); ok {
		return p
	}
	return DefaultPriority
}

// members reads the group's members by user id, at most MaxGroupMembers
// (truncated: there are more): its member rows checked against the
// users' cells (the authority).
func (s *Service) members(ctx context.Context, g group) (_ []Member, truncated bool, err error) {
	var uids []weibo.UserID
	table, _ := g.row()
	err = s.st.Scan(ctx, &hbase.Scan{Table: table, Prefix: g.memberPrefix(), Limit: MaxGroupMembers + 1}, func(r *hbase.Result) error {
		var uid weibo.UserID
		var ok bool
		if g.kind == KindRole {
			_, uid, ok = tables.DecodeRoleMemberKey(r.Row)
		} else {
			_, uid, ok = tables.DecodeDeptMemberKey(r.Row)
		}
		if ok {
			uids = append(uids, uid)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if len(uids) > MaxGroupMembers {
		uids, truncated = uids[:MaxGroupMembers], true
	}
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, false, err
	}
	out := []Member{}
	for i, r := range rs {
		if g.holds(r) {
			out = append(out, Member{ID: uids[i], Display: text(r, tables.ColUsername)})
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return out, truncated, nil
}

// holds reports whether the users row r (families i, o) is a member of g
// by its own cells.
func (g group) holds(r *hbase.Result) bool {
	if r.Value(tables.FamInfo, tables.ColUsername) == nil {
		return false
	}
	if g.kind == KindRole {
		return r.Value(tables.FamOrg, tables.RoleQualifier(g.role)) != nil
	}
	return tables.DecodeDeptID(r.Value(tables.FamOrg, tables.ColUserDept)) == g.dept
}

// GetGroup returns group id ("department:N", "role:N"), with its members
// when withMembers. Errors: NOT_FOUND; the store's.
func (s *Service) GetGroup(ctx context.Context, id string, withMembers bool) (_ *Group, err error) {
	defer weibo.Wrapf(&err, "get group %s", id)
	g, err := parseGroup(id)
	if err != nil {
		return nil, err
	}
	return s.getGroup(ctx, g, withMembers)
}

func (s *Service) getGroup(ctx context.Context, g group, withMembers bool) (*Group, error) {
	r, err := s.readGroup(ctx, g)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, weibo.NotFound("group %s not found", g.node())
	}
	out := groupOf(g, r)
	if withMembers {
		if out.Members, out.MembersTruncated, err = s.members(ctx, g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ListGroups returns every department, then every role, by id, with
// their members when withMembers. Errors are the store's.
func (s *Service) ListGroups(ctx context.Context, withMembers bool) (_ []*Group, err error) {
	defer weibo.Wrap(&err, "list groups")
	var out []*Group
	for _, kind := range []GroupKind{KindDepartment, KindRole} {
		table, nameQ := tables.Departments, tables.ColDeptName
		if kind == KindRole {
			table, nameQ = tables.Roles, tables.ColRoleName
		}
		var found []*Group
		var gs []group
		err := s.st.Scan(ctx, &hbase.Scan{Table: table, Families: []string{tables.FamInfo}}, func(r *hbase.Result) error {
			g := group{kind: kind}
			if kind == KindRole {
				rid, ok := tables.DecodeRoleKey(r.Row)
				if !ok {
					return nil
				}
				g.role = rid
			} else {
				did, ok := tables.DecodeDeptKey(r.Row)
				if !ok || did == weibo.RootDept {
					return nil
				}
				g.dept = did
			}
			if r.Value(tables.FamInfo, nameQ) != nil {
				found = append(found, groupOf(g, r))
				gs = append(gs, g)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		order := make([]int, len(found))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(gs[a].id(), gs[b].id()) })
		for _, i := range order {
			if withMembers {
				if found[i].Members, found[i].MembersTruncated, err = s.members(ctx, gs[i]); err != nil {
					return nil, err
				}
			}
			out = append(out, found[i])
		}
	}
	if out == nil {
		out = []*Group{}
	}
	return out, nil
}

// GroupsByExternalID returns the groups whose externalId is ext (case
// exact), departments then roles, from the index. Errors are the store's.
func (s *Service) GroupsByExternalID(ctx context.Context, ext string) (_ []*Group, err error) {
	defer weibo.Wrap(&err, "groups by externalId")
	out := []*Group{}
	for _, kind := range []GroupKind{KindDepartment, KindRole} {
		g := group{kind: kind}
		ids, err := s.indexed(ctx, g.indexKind(), ext)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			g.dept, g.role = weibo.DeptID(id), weibo.RoleID(id)
			r, err := s.readGroup(ctx, g)
			if err != nil {
				return nil, err
			}
			if r != nil && text(r, tables.ColExternalID) == ext {
				out = append(out, groupOf(g, r))
			}
		}
	}
	return out, nil
}
