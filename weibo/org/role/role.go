// Package role keeps the roles of seed 001, case 1 ("权限控制人员角色表").
// Users have many roles, roles
// have many users, and every assignment carries a priority; a user's roles
// are listed highest priority first. The seed's two tables map to:
//
//   - psn cf2 (roleId → priority): family o of the user's weibo:users row,
//     qualifier = the role id (8 bytes BE), value = the priority (4 bytes BE).
//     This side is the AUTHORITY: a user holds a role exactly when the cell
//     exists and the role's row exists.
//   - role cf1 / cf2: weibo:roles, one row per role (name, member counter)
//     and, made tall like weibo:relations, one row per member. Member rows
//     are the index that lists a role's members; reads check every member
//     row against the user's cell (one batched GetMany per page) and skip
//     those without one.
//
// Role names are unique ignoring case, through weibo:rolenames (one row per
// lower-cased name, claimed with CheckAndPut(absent) like usernames). The
// name index row is written before the role row; a role exists when its
// role row exists, and an index row pointing at a missing role row is stale.
//
// A role grants permissions (org.PermSet, the role row's i:pm cell):
// Create takes them, SetPermissions replaces them, and MigratePermissions
// gives the role named admin of an older store ADMINISTRATOR. Who may
// make which change is package authz's (the rank rule).
//
// docs/schema.md documents every byte.
package role

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Create creates a role granting permissions (none by default). The name
// is trimmed and must be 1 to 64 characters and unique ignoring case.
// Errors: BAD_USER_INPUT for an empty or too long name, an unknown
// permission, and (reason ROLE_NAME_TAKEN) for a taken name.
//
// Writes, in order: a fresh id from the sequence (Increment of tables.SeqKey),
// the weibo:rolenames row with CheckAndPut(absent) — the one atomic step
// that makes the name unique —, then the role row (the commit point). A
// failure between the two leaves an index row whose role row is missing:
// readers skip it, a later create of the same name removes it once it is
// older than 10 s, and Fsck removes it.
func (s *Service) Create(ctx context.Context, name string, permissions ...org.Permission) (_ *org.Role, err error) {
	defer weibo.Wrap(&err, "create role")
	name, err = org.CleanName("name", name, org.MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	perms, err := org.PermsOf("permissions", permissions)
	if err != nil {
		return nil, err
	}
	if r, err := s.ByName(ctx, name); err != nil {
		return nil, err
	} else if r != nil {
		return nil, org.ErrRoleNameTaken(name)
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Roles, Row: tables.SeqKey, Family: tables.FamCount, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	rid := weibo.RoleID(seq)
	rec, err := s.audit.Record(ctx, org.ActionRoleCreate, org.RoleNode(rid), nil, map[string]any{"name": name, "permissions": perms.List()}, org.RoleProof(rid, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.claimRoleName(ctx, name, rid); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, org.StepRoleCreate); err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: rec.Proven(hbase.Values{
		tables.FamInfo:  {tables.ColRoleName: []byte(name), tables.ColCreated: tables.EncodeMillis(now), tables.ColRolePerms: tables.EncodeRolePerms(uint64(perms))},
		tables.FamCount: {tables.ColMemberCount: tables.EncodeCounter(0)},
	})}); err != nil {
		return nil, err
	}
	rec.Commit()
	return &org.Role{ID: rid, Name: name, CreatedAt: time.UnixMilli(now), Perms: perms, PermsStored: true}, nil
}

// claimRoleName points the name index row of name at rid with
// CheckAndPut(absent). A row that already points at rid counts as claimed
// (a repeated rename); a row whose role row is missing and that is older
// than org.StaleGrace is removed (CheckAndDelete) and the claim retried.
func (s *Service) claimRoleName(ctx context.Context, name string, rid weibo.RoleID) error {
	key := tables.RoleNameKey(name)
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.RoleNames, Row: key, Values: hbase.Values{
			tables.FamName: {tables.ColRoleID: tables.EncodeID(rid)}}}, tables.FamName, tables.ColRoleID, nil)
		if err != nil || ok {
			return err
		}
		cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
		if err != nil {
			return err
		}
		c := cur.Cell(tables.FamName, tables.ColRoleID)
		if c == nil {
			continue // deleted meanwhile: try again
		}
		owner := tables.DecodeRoleID(c.Value)
		if owner == rid {
			return nil
		}
		roles, err := s.Get(ctx, []weibo.RoleID{owner})
		if err != nil {
			return err
		}
		if roles[0] != nil || s.w.NowMillis()-c.Timestamp < org.StaleGrace.Milliseconds() {
			return org.ErrRoleNameTaken(name)
		}
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: key}, tables.FamName, tables.ColRoleID, c.Value); err != nil {
			return err
		}
	}
	return org.ErrRoleNameTaken(name)
}

// Rename renames a role and returns it. Errors: BAD_USER_INPUT for a bad
// name or (reason ROLE_NAME_TAKEN) one another role has, NOT_FOUND for an
// unknown role.
//
// Writes, in order: the new name's index row with CheckAndPut(absent), the
// role row's name (the commit point), then the CheckAndDelete of the old
// name's index row (only if it still points at this role). A failure after
// the first write leaves an index row for the new name pointing at a role
// of another name: readers skip it, repeating the rename finishes it, Fsck
// removes it. A change of case only rewrites the role row.
func (s *Service) Rename(ctx context.Context, rid weibo.RoleID, name string) (_ *org.Role, err error) {
	defer weibo.Wrapf(&err, "rename role %s", rid)
	name, err = org.CleanName("name", name, org.MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	role, err := s.Existing(ctx, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionRoleRename, org.RoleNode(rid), map[string]any{"name": role.Name}, map[string]any{"name": name}, org.RoleProof(rid, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	oldKey, newKey := tables.RoleNameKey(role.Name), tables.RoleNameKey(name)
	sameKey := bytes.Equal(oldKey, newKey)
	if !sameKey {
		if err := s.claimRoleName(ctx, name, rid); err != nil {
			return nil, err
		}
		if err := s.w.Step(ctx, org.StepRoleRename); err != nil {
			return nil, err
		}
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: rec.Proven(hbase.Values{
		tables.FamInfo: {tables.ColRoleName: []byte(name)}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	if !sameKey {
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: oldKey}, tables.FamName, tables.ColRoleID, tables.EncodeID(rid)); err != nil {
			return nil, err
		}
	}
	role.Name = name
	return role, nil
}

// Delete deletes a role and removes it from every user. Errors:
// NOT_FOUND for an unknown role.
//
// Writes, in order: the role row (the commit point: from then on every
// read ignores the role, whatever still refers to it), then, for each member
// row in batches, the users' cells and the member rows, and last the name
// index row (CheckAndDelete, only if it still points at this role). A
// failure part-way leaves cells and rows of a role that no longer exists:
// readers skip them and Fsck removes them.
func (s *Service) Delete(ctx context.Context, rid weibo.RoleID) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete role %s", rid)
	role, err := s.Existing(ctx, rid)
	if err != nil {
		return false, err
	}
	// The proof is armed in the role row, which the commit deletes whole.
	rec, err := s.audit.Record(ctx, org.ActionRoleDelete, org.RoleNode(rid), map[string]any{"name": role.Name, "memberCount": role.MemberCount}, nil, org.RoleProof(rid, true))
	if err != nil {
		return false, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: tables.RoleKey(rid)}); err != nil {
		return false, err
	}
	rec.Commit()
	if err := s.w.Step(ctx, org.StepRoleDelete); err != nil {
		return false, err
	}
	if err := s.purgeRoleMembers(ctx, rid); err != nil {
		return false, err
	}
	if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: tables.RoleNameKey(role.Name)}, tables.FamName, tables.ColRoleID, tables.EncodeID(rid)); err != nil {
		return false, err
	}
	return true, nil
}

// purgeRoleMembers deletes, batch by batch, the users' cells of rid and then
// its member rows.
func (s *Service) purgeRoleMembers(ctx context.Context, rid weibo.RoleID) error {
	var users, members []*hbase.Delete
	flush := func() error {
		if len(users) == 0 {
			return nil
		}
		if err := s.st.DeleteMany(ctx, users); err != nil {
			return err
		}
		err := s.st.DeleteMany(ctx, members)
		users, members = users[:0], members[:0]
		return err
	}
	prefix := tables.RoleMemberPrefix(rid)
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Roles, Prefix: prefix}, func(r *hbase.Result) error {
		_, uid, ok := tables.DecodeRoleMemberKey(r.Row)
		if !ok {
			return nil
		}
		users = append(users, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {tables.RoleQualifier(rid): nil}}})
		members = append(members, &hbase.Delete{Table: tables.Roles, Row: bytes.Clone(r.Row)})
		if len(users) >= s.w.Batch() {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// Get reads roles by id with one batched GetMany; the result has one
// entry per id, nil where the role does not exist.
func (s *Service) Get(ctx context.Context, ids []weibo.RoleID) (_ []*org.Role, err error) {
	defer weibo.Wrap(&err, "get roles")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(id), Families: []string{tables.FamInfo, tables.FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*org.Role, len(ids))
	for i, r := range rs {
		out[i] = org.RoleFromRow(ids[i], r)
	}
	return out, nil
}

// Existing reads role rid; NOT_FOUND when there is none.
func (s *Service) Existing(ctx context.Context, rid weibo.RoleID) (*org.Role, error) {
	rs, err := s.Get(ctx, []weibo.RoleID{rid})
	if err != nil {
		return nil, err
	}
	if rs[0] == nil {
		return nil, weibo.NotFound("role %s not found", rid)
	}
	return rs[0], nil
}

// ByName returns the role with that name (ignoring case and surrounding
// space), or nil when there is none: one Get of the name index and one of
// the role row, which must still carry the name.
func (s *Service) ByName(ctx context.Context, name string) (_ *org.Role, err error) {
	defer weibo.Wrap(&err, "role by name")
	key := tables.RoleNameKey(name)
	if len(key) == 0 {
		return nil, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
	if err != nil {
		return nil, err
	}
	v := r.Value(tables.FamName, tables.ColRoleID)
	if v == nil {
		return nil, nil
	}
	roles, err := s.Get(ctx, []weibo.RoleID{tables.DecodeRoleID(v)})
	if err != nil {
		return nil, err
	}
	if roles[0] == nil || !bytes.Equal(tables.RoleNameKey(roles[0].Name), key) {
		return nil, nil // stale index row
	}
	return roles[0], nil
}

// Ensure returns the role named name, creating it granting permissions when
// there is none (an existing role keeps its own). Errors as for Create.
func (s *Service) Ensure(ctx context.Context, name string, permissions ...org.Permission) (_ *org.Role, err error) {
	defer weibo.Wrap(&err, "ensure role")
	for attempt := 0; ; attempt++ {
		r, err := s.ByName(ctx, name)
		if err != nil || r != nil {
			return r, err
		}
		r, err = s.Create(ctx, name, permissions...)
		if err == nil || attempt > 0 {
			return r, err
		}
		if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Reason != weibo.ReasonRoleNameTaken {
			return nil, err
		}
	}
}

// OfUsers returns the roles of each user, highest priority first, ties by
// role name: one GetMany of the users' family o, one GetMany of the roles.
// Cells of roles that no longer exist are skipped.
func (s *Service) OfUsers(ctx context.Context, uids []weibo.UserID) (_ [][]*org.RoleAssignment, err error) {
	defer weibo.Wrap(&err, "user roles")
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	type cell struct {
		rid  weibo.RoleID
		prio int
	}
	cells := make([][]cell, len(uids))
	seen := map[weibo.RoleID]int{}
	var ids []weibo.RoleID
	for i, r := range rs {
		for _, c := range r.Family(tables.FamOrg) {
			rid, isRole := tables.DecodeRoleQualifier(c.Qualifier)
			p, ok := tables.DecodePriority(c.Value)
			if !isRole || !ok {
				continue
			}
			cells[i] = append(cells[i], cell{rid, p})
			if _, ok := seen[rid]; !ok {
				seen[rid] = len(ids)
				ids = append(ids, rid)
			}
		}
	}
	var roles []*org.Role
	if len(ids) > 0 {
		if roles, err = s.Get(ctx, ids); err != nil {
			return nil, err
		}
	}
	out := make([][]*org.RoleAssignment, len(uids))
	for i, cs := range cells {
		out[i] = []*org.RoleAssignment{}
		for _, c := range cs {
			if role := roles[seen[c.rid]]; role != nil {
				out[i] = append(out[i], &org.RoleAssignment{Role: role, Priority: c.prio})
			}
		}
		slices.SortFunc(out[i], func(a, b *org.RoleAssignment) int {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority)
			}
			return cmp.Or(strings.Compare(strings.ToLower(a.Role.Name), strings.ToLower(b.Role.Name)),
				strings.Compare(a.Role.Name, b.Role.Name), cmp.Compare(a.Role.ID, b.Role.ID))
		})
	}
	return out, nil
}

// List pages through every role by name (ignoring case): a scan of
// weibo:rolenames, whose rowkeys are the lower-cased names, and one GetMany
// of the page's role rows; index rows whose role is gone or renamed are
// skipped. Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) List(ctx context.Context, first *int, after *string) (_ *org.RoleConnection, err error) {
	defer weibo.Wrap(&err, "roles")
	q := paging.Query{Kind: paging.CursorRoleNames, MaxRowLen: 4 * org.MaxRoleNameLength, Scan: hbase.Scan{Table: tables.RoleNames}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*org.Role, error) {
			ids := make([]weibo.RoleID, len(rows))
			for i, r := range rows {
				ids[i] = tables.RoleNameRole(r)
			}
			roles, err := s.Get(ctx, ids)
			if err != nil {
				return nil, err
			}
			for i, role := range roles {
				if role != nil && !bytes.Equal(tables.RoleNameKey(role.Name), rows[i].Row) {
					roles[i] = nil
				}
			}
			return roles, nil
		}, func(role *org.Role, cursor string) org.RoleEdge { return org.RoleEdge{Role: role, Cursor: cursor} })
	if err != nil {
		return nil, err
	}
	return &org.RoleConnection{Edges: edges, PageInfo: info}, nil
}

// Members pages through the members of role rid by user id, with their
// priorities: a prefix scan of the role's member rows and one GetMany of
// the users' family o per page, which is the authority (member rows without
// the user's cell are skipped; the priority is the user's). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) Members(ctx context.Context, rid weibo.RoleID, first *int, after *string) (_ *org.RoleMemberConnection, err error) {
	defer weibo.Wrap(&err, "role members")
	q := paging.Query{Kind: paging.CursorRoleMembers, RowLen: tables.LinkKeyLen,
		Scan: hbase.Scan{Table: tables.Roles, Prefix: tables.RoleMemberPrefix(rid)}}
	qual := tables.RoleQualifier(rid)
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*org.RoleMemberEdge, error) {
			uids := make([]weibo.UserID, len(rows))
			gets := make([]*hbase.Get, len(rows))
			for i, r := range rows {
				_, uids[i], _ = tables.DecodeRoleMemberKey(r.Row) // 0 when malformed: no such user
				gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uids[i]), Families: []string{tables.FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*org.RoleMemberEdge, len(rows))
			for i, u := range us {
				if p, ok := tables.DecodePriority(u.Value(tables.FamOrg, qual)); ok && uids[i] != 0 {
					out[i] = &org.RoleMemberEdge{User: uids[i], Priority: p}
				}
			}
			return out, nil
		}, func(e *org.RoleMemberEdge, cursor string) org.RoleMemberEdge {
			e.Cursor = cursor
			return *e
		})
	if err != nil {
		return nil, err
	}
	return &org.RoleMemberConnection{Edges: edges, PageInfo: info}, nil
}
