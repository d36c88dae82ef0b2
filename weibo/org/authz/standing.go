package authz

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// A user's standing (org.Standing: permissions and rank) is read from
// the user's family o, which lists their role ids with the priority of
// each assignment, and the rows of those roles, which carry each role's
// permissions: two round trips for any number of users, since the users'
// rows come in one GetMany and all their roles in a second. A cell of a
// role that no longer exists counts for nothing.

// roleIDs appends to ids the roles named in the family o of rows that
// seen does not hold yet.
func roleIDs(ids []weibo.RoleID, seen map[weibo.RoleID]bool, rows ...*hbase.Result) []weibo.RoleID {
	for _, r := range rows {
		for _, c := range r.Family(tables.FamOrg) {
			if rid, ok := tables.DecodeRoleQualifier(c.Qualifier); ok && !seen[rid] {
				seen[rid] = true
				ids = append(ids, rid)
			}
		}
	}
	return ids
}

// roleGets returns the Gets of the role rows of ids (family i).
func roleGets(ids []weibo.RoleID) []*hbase.Get {
	gets := make([]*hbase.Get, len(ids))
	for i, rid := range ids {
		gets[i] = &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(rid), Families: []string{tables.FamInfo}}
	}
	return gets
}

// standingOf is the standing of the user whose family o is row, given
// their roles (missing: deleted).
func standingOf(row *hbase.Result, roles map[weibo.RoleID]*org.Role) org.Standing {
	st := org.Standing{Manager: len(org.ManagedIn(row)) > 0}
	for _, c := range row.Family(tables.FamOrg) {
		rid, isRole := tables.DecodeRoleQualifier(c.Qualifier)
		p, ok := tables.DecodePriority(c.Value)
		if !isRole || !ok {
			continue
		}
		if role := roles[rid]; role != nil {
			st.Add(role.Perms, p)
		}
	}
	return st
}

// userGets returns the Gets of the family o of uids.
func userGets(uids []weibo.UserID) []*hbase.Get {
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
	}
	return gets
}

// standings reads the standing of each user of uids, and the roles of
// extra too (nil where missing): one GetMany of the users' family o, one
// of every role named (none when there is none).
func (s *Service) standings(ctx context.Context, uids []weibo.UserID, extra ...weibo.RoleID) ([]org.Standing, map[weibo.RoleID]*org.Role, error) {
	rows, err := s.st.GetMany(ctx, userGets(uids))
	if err != nil {
		return nil, nil, err
	}
	seen := map[weibo.RoleID]bool{}
	var ids []weibo.RoleID
	for _, rid := range extra {
		if !seen[rid] {
			seen[rid] = true
			ids = append(ids, rid)
		}
	}
	ids = roleIDs(ids, seen, rows...)
	roles, err := s.readRoles(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	out := make([]org.Standing, len(uids))
	for i, r := range rows {
		out[i] = standingOf(r, roles)
	}
	return out, roles, nil
}

// readRoles reads the role rows of ids with one GetMany (none for no ids).
func (s *Service) readRoles(ctx context.Context, ids []weibo.RoleID) (map[weibo.RoleID]*org.Role, error) {
	roles := make(map[weibo.RoleID]*org.Role, len(ids))
	if len(ids) == 0 {
		return roles, nil
	}
	rs, err := s.st.GetMany(ctx, roleGets(ids))
	if err != nil {
		return nil, err
	}
	for i, r := range rs {
		if role := org.RoleFromRow(ids[i], r); role != nil {
			roles[ids[i]] = role
		}
	}
	return roles, nil
}

// Standing returns user uid's standing: the permissions their roles grant
// and their rank (two round trips). Errors are the store's.
func (s *Service) Standing(ctx context.Context, uid weibo.UserID) (_ org.Standing, err error) {
	defer weibo.Wrap(&err, "standing")
	sts, _, err := s.standings(ctx, []weibo.UserID{uid})
	if err != nil {
		return org.Standing{}, err
	}
	return sts[0], nil
}

// Standings returns the standing of each user of uids, in order (two
// round trips whatever their number). Errors are the store's.
func (s *Service) Standings(ctx context.Context, uids []weibo.UserID) (_ []org.Standing, err error) {
	defer weibo.Wrap(&err, "standings")
	sts, _, err := s.standings(ctx, uids)
	return sts, err
}

// RequirePermission returns nil when viewer holds p through one of their
// roles (ADMINISTRATOR grants every permission), and the FORBIDDEN
// *weibo.Error "needs the permission P" otherwise. Errors otherwise are
// the store's.
func (s *Service) RequirePermission(ctx context.Context, viewer weibo.UserID, p org.Permission) (err error) {
	defer weibo.Wrap(&err, "require permission")
	st, err := s.Standing(ctx, viewer)
	if err != nil {
		return err
	}
	return st.Require(p)
}

// ActOn applies the rank rule to viewer acting on user target (changing
// their roles or department, suspending them): nil when the viewer's rank
// is above the target's, or equal to it and the viewer holds
// ADMINISTRATOR; the FORBIDDEN *weibo.Error "your rank R is not above
// the target's rank T" otherwise. It checks no permission (the field's
// @hasPermission does). One GetMany of both users' family o and one of
// their roles. Errors otherwise are the store's.
func (s *Service) ActOn(ctx context.Context, viewer, target weibo.UserID) (err error) {
	defer weibo.Wrap(&err, "authorize")
	sts, _, err := s.standings(ctx, []weibo.UserID{viewer, target})
	if err != nil {
		return err
	}
	return sts[0].ActOn(sts[1])
}

// Assignments decides a change of role rid for each user of uids by
// viewer (an assign with priority, or a revoke with priority nil). The
// call as a whole is refused (FORBIDDEN, the error returned) when the
// role grants a permission the viewer does not hold, or when the priority
// is not below the viewer's rank (up to it with ADMINISTRATOR); each user
// is refused (FORBIDDEN, their entry of the result) unless the viewer may
// act on them (ActOn's rule). An unknown role is left to the change
// itself (NOT_FOUND there). Two round trips; errors otherwise are the
// store's.
func (s *Service) Assignments(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority *int) (_ []error, err error) {
	defer weibo.Wrap(&err, "authorize")
	sts, roles, err := s.standings(ctx, append([]weibo.UserID{viewer}, uids...), rid)
	if err != nil {
		return nil, err
	}
	v := sts[0]
	if role := roles[rid]; role != nil {
		if err := v.ManageRole(role.Name, role.Perms); err != nil {
			return nil, err
		}
	}
	if priority != nil {
		if err := v.Assign(*priority); err != nil {
			return nil, err
		}
	}
	out := make([]error, len(uids))
	for i := range uids {
		out[i] = v.ActOn(sts[1+i])
	}
	return out, nil
}

// ManageRole decides whether viewer may create, rename, delete or set the
// permissions of role rid (0: a role being created) so that it grants
// perms: nil when the viewer holds every permission the role grants now
// and every one of perms, the FORBIDDEN *weibo.Error naming the first
// missing otherwise — no one hands out, or takes away, a permission they
// do not hold. An unknown role is left to the change (NOT_FOUND there).
// Two round trips; errors otherwise are the store's.
func (s *Service) ManageRole(ctx context.Context, viewer weibo.UserID, rid weibo.RoleID, perms org.PermSet) (err error) {
	defer weibo.Wrap(&err, "authorize")
	var extra []weibo.RoleID
	if rid != 0 {
		extra = append(extra, rid)
	}
	sts, roles, err := s.standings(ctx, []weibo.UserID{viewer}, extra...)
	if err != nil {
		return err
	}
	if role := roles[rid]; role != nil {
		if err := sts[0].ManageRole(role.Name, role.Perms); err != nil {
			return err
		}
	}
	return sts[0].ManageRole("", perms)
}

// ActOnAs applies the rank rule (ActOn's) to a caller of standing viewer
// — one that is no user, such as a provisioning client — acting on each
// user of uids: one entry per user, nil where the viewer may act on them,
// FORBIDDEN where not. One GetMany of the users' family o and one of
// their roles. Errors otherwise are the store's.
func (s *Service) ActOnAs(ctx context.Context, viewer org.Standing, uids []weibo.UserID) (_ []error, err error) {
	defer weibo.Wrap(&err, "authorize")
	if len(uids) == 0 {
		return nil, nil
	}
	sts, _, err := s.standings(ctx, uids)
	if err != nil {
		return nil, err
	}
	out := make([]error, len(uids))
	for i := range uids {
		out[i] = viewer.ActOn(sts[i])
	}
	return out, nil
}

// AssignmentsAs is Assignments for a caller of standing viewer that is no
// user (a provisioning client): the call as a whole is refused when the
// role grants a permission the viewer does not hold or the priority is
// not below the viewer's rank; each user is refused (their entry) unless
// the viewer may act on them. Errors otherwise are the store's.
func (s *Service) AssignmentsAs(ctx context.Context, viewer org.Standing, uids []weibo.UserID, rid weibo.RoleID, priority *int) (_ []error, err error) {
	defer weibo.Wrap(&err, "authorize")
	sts, roles, err := s.standings(ctx, uids, rid)
	if err != nil {
		return nil, err
	}
	if role := roles[rid]; role != nil {
		if err := viewer.ManageRole(role.Name, role.Perms); err != nil {
			return nil, err
		}
	}
	if priority != nil {
		if err := viewer.Assign(*priority); err != nil {
			return nil, err
		}
	}
	out := make([]error, len(uids))
	for i := range uids {
		out[i] = viewer.ActOn(sts[i])
	}
	return out, nil
}
