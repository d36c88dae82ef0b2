package domain

import (
	"bytes"
	"context"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// UserFilter says which users SearchUsers lists; the criteria combine.
type UserFilter struct {
	// UsernamePrefix keeps usernames starting with it, ignoring case.
	UsernamePrefix string
	// Role keeps the members of a role (nil: any).
	Role *weibo.RoleID
	// Department keeps the members of a department (nil: any).
	Department *weibo.DeptID
	// WithoutDepartment keeps the users in no department.
	WithoutDepartment bool
	// Suspended, when set, keeps the users suspended now (true) or those
	// not suspended (false), from the registry of suspensions.
	Suspended *bool
}

// UserSearchConnection is one page of SearchUsers.
type UserSearchConnection struct {
	// Edges are the page's users.
	Edges []weibo.UserEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the number of users matching when a kept counter gives
	// it (the role's or the department's members, with no other
	// criterion); nil otherwise. Without any criterion it is the number of
	// all users, which the resolver reads when the query asks for it
	// (account.Service.UserCount).
	TotalCount *int
}

// maxUsernamePrefix is the longest usernamePrefix: a username's length.
const maxUsernamePrefix = 32

// SearchUsers pages through the users f keeps. One list drives the scan —
// a role's member rows (with Role), else a department's member rows (with
// Department; both in user-id order), else the usernames table from
// UsernamePrefix (username order: a prefix scan, never a full scan when a
// prefix is given) — and each chunk of rows is verified against the users'
// rows with one GetMany, which also applies the other criteria. A page
// thus costs about one scan and one GetMany per chunk; a criterion that
// rejects most of the driving list makes a page read more of it. Errors:
// NOT_FOUND for an unknown role or department, BAD_USER_INPUT for a prefix
// over 32 characters, both Department and WithoutDepartment, or bad
// paging arguments.
func (d *Domain) SearchUsers(ctx context.Context, f UserFilter, first *int, after *string) (_ *UserSearchConnection, err error) {
	defer weibo.Wrap(&err, "search users")
	prefix := strings.ToLower(f.UsernamePrefix)
	if len(prefix) > maxUsernamePrefix {
		return nil, weibo.BadInput("filter.usernamePrefix", "usernamePrefix must be at most %d characters", maxUsernamePrefix)
	}
	if f.Department != nil && f.WithoutDepartment {
		return nil, weibo.BadInput("filter.withoutDepartment", "departmentId and withoutDepartment exclude each other")
	}
	var total *int
	var q paging.Query
	switch {
	case f.Role != nil:
		rs, err := d.Org.Roles.Get(ctx, []weibo.RoleID{*f.Role})
		if err != nil {
			return nil, err
		}
		if rs[0] == nil {
			return nil, weibo.NotFoundOn("filter.roleId", "role "+f.Role.String()+" not found")
		}
		if f.Department == nil && !f.WithoutDepartment && prefix == "" && f.Suspended == nil {
			total = new(int(rs[0].MemberCount))
		}
		q = paging.Query{Kind: paging.CursorRoleMembers, RowLen: tables.LinkKeyLen,
			Scan: hbase.Scan{Table: tables.Roles, Prefix: tables.RoleMemberPrefix(*f.Role)}}
	case f.Department != nil:
		ds, err := d.Org.Departments.Get(ctx, []weibo.DeptID{*f.Department})
		if err != nil {
			return nil, err
		}
		if ds[0] == nil {
			return nil, weibo.NotFoundOn("filter.departmentId", "department "+f.Department.String()+" not found")
		}
		if prefix == "" && f.Suspended == nil {
			total = new(int(ds[0].MemberCount))
		}
		q = paging.Query{Kind: paging.CursorUsers, RowLen: tables.LinkKeyLen,
			Scan: hbase.Scan{Table: tables.Departments, Prefix: tables.DeptMemberPrefix(*f.Department)}}
	default:
		q = paging.Query{Kind: paging.CursorUsernames, MaxRowLen: maxUsernamePrefix,
			Scan: hbase.Scan{Table: tables.Usernames, Prefix: []byte(prefix)}}
		if prefix == "" {
			q.Scan.Prefix = nil
		}
		if f.Suspended != nil && *f.Suspended {
			return d.searchSuspended(ctx, f, prefix, q, first, after)
		}
	}
	edges, info, err := paging.Read(ctx, d.Store(), q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*weibo.UserID, error) {
			return d.keepUsers(ctx, q.Kind, f, prefix, rows)
		}, weibo.NewUserEdge)
	if err != nil {
		return nil, err
	}
	return &UserSearchConnection{Edges: edges, PageInfo: info, TotalCount: total}, nil
}

// keepUsers verifies a chunk of the driving list's rows: the users they
// name, read with one GetMany, that exist and meet every criterion of f.
func (d *Domain) keepUsers(ctx context.Context, kind paging.CursorKind, f UserFilter, prefix string, rows []*hbase.Result) ([]*weibo.UserID, error) {
	uids := make([]weibo.UserID, len(rows))
	gets := make([]*hbase.Get, len(rows))
	for i, r := range rows {
		switch kind {
		case paging.CursorRoleMembers:
			_, uids[i], _ = tables.DecodeRoleMemberKey(r.Row)
		case paging.CursorUsers:
			_, uids[i], _ = tables.DecodeDeptMemberKey(r.Row)
		default:
			uids[i] = tables.UsernameUser(r)
		}
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uids[i]), Families: []string{tables.FamInfo, tables.FamOrg}}
	}
	us, err := d.Store().GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*weibo.UserID, len(rows))
	for i, u := range us {
		name := u.Value(tables.FamInfo, tables.ColUsername)
		switch {
		case uids[i] == 0 || name == nil:
			continue // no such user (a stale row)
		case kind == paging.CursorUsernames && !bytes.Equal(tables.UsernameKey(string(name)), rows[i].Row):
			continue // a stale usernames row
		case prefix != "" && !strings.HasPrefix(strings.ToLower(string(name)), prefix):
			continue
		case f.Role != nil && u.Value(tables.FamOrg, tables.RoleQualifier(*f.Role)) == nil:
			continue
		case f.Department != nil && tables.UserDepartment(u) != *f.Department:
			continue
		case f.WithoutDepartment && tables.UserDepartment(u) != weibo.RootDept:
			continue
		case f.Suspended != nil && d.Suspensions.Suspended(uids[i], d.Writes.NowMillis()) != *f.Suspended:
			continue
		}
		out[i] = &uids[i]
	}
	return out, nil
}
