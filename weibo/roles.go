package weibo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
)

// Roles (seed 001, case 1: "权限控制人员角色表"). Users have many roles, roles
// have many users, and every assignment carries a priority; a user's roles
// are listed highest priority first. The seed's two tables map to:
//
//   - psn cf2 (roleId → priority): family o of the user's weibo:users row,
//     qualifier = the role id (8 bytes BE), value = the priority (4 bytes BE).
//     This side is AUTHORITATIVE: a user holds a role exactly when the cell
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
// docs/schema.md documents every byte.

// RoleID is a role's id, allocated from a sequence. In GraphQL it is the
// decimal string; in rowkeys and qualifiers 8 bytes big-endian.
type RoleID uint64

// String returns the decimal form used as the GraphQL ID.
func (id RoleID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseRoleID parses a GraphQL role ID (decimal, 1 to 20 digits, no sign or
// leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseRoleID(s string) (RoleID, error) {
	n, err := ParseUserID(s)
	return RoleID(n), err
}

// Priority bounds of a role assignment (inclusive). Larger means higher:
// a user's roles are listed from MaxPriority down.
const (
	MinPriority = 1
	MaxPriority = 1000
)

// MaxRoleNameLength is the longest role name, in characters.
const MaxRoleNameLength = 64

// AdminRole is the name of the role the admin mutations require (the
// @hasRole(role: "admin") directive of the schema).
const AdminRole = "admin"

// Reasons of role and department errors (extensions.reason).
const (
	// ReasonRoleNameTaken: createRole or renameRole with a name another role
	// has, ignoring case (code BAD_USER_INPUT).
	ReasonRoleNameTaken = "ROLE_NAME_TAKEN"
	// ReasonConcurrentUpdate: the row changed between the read and the
	// conditional write of a mutation; retrying it is safe (code BAD_USER_INPUT).
	ReasonConcurrentUpdate = "CONCURRENT_UPDATE"
)

// Steps of two-sided changes, passed to the hook of WithPairWriteHook. Each
// names the point after the change's first write and before its second.
const (
	PairStepCreateRole        = "createRole"        // after the name index row, before the role row
	PairStepRenameRole        = "renameRole"        // after the new name's index row, before the role row
	PairStepDeleteRole        = "deleteRole"        // after the role row is deleted, before its members and name
	PairStepAssignRole        = "assignRole"        // after the role's member row, before the user's cell
	PairStepRevokeRole        = "revokeRole"        // after the user's cell is deleted, before the member row
	PairStepCreateDepartment  = "createDepartment"  // after the parent's child row, before the department row
	PairStepMoveDepartment    = "moveDepartment"    // after the new parent's child row, before the department's parent
	PairStepDeleteDepartment  = "deleteDepartment"  // after the department row is deleted, before the parent's child row
	PairStepSetUserDepartment = "setUserDepartment" // after the department's member row, before the user's cell
)

func (s *Service) pairStep(ctx context.Context, step string) error {
	if s.opts.pairHook != nil {
		return s.opts.pairHook(ctx, step)
	}
	return nil
}

// staleGrace is how old an index row without its main row must be before
// a write treats it as debris of a failed change rather than a change in
// progress (Fsck takes its own grace).
const staleGrace = 10 * time.Second

// Row kinds after the 9-byte salt|id prefix of weibo:roles and weibo:departments.
const (
	linkMember byte = 'm' // a member row: prefix | 'm' | uid(8)
	linkChild  byte = 'c' // a child row (departments): prefix | 'c' | child(8)
)

// Cursor kinds of the role and department connections.
const (
	cursorRoleMembers byte = 'M' // + uid(8): a role member rowkey suffix
	cursorRoleNames   byte = 'N' // + lower-cased name: a weibo:rolenames rowkey
	cursorDepartments byte = 'D' // + department id(8): a child rowkey suffix
)

// idKey is salt(id) | id(8): the rowkey of a role or department row, salted
// like user rows (the same FNV-1a of the 8-byte id) so that consecutive ids
// land in different regions.
func idKey(id uint64) []byte { return userPrefix(UserID(id)) }

// RoleKey is the rowkey of a role row of weibo:roles: salt(rid)(1) | rid(8).
func RoleKey(rid RoleID) []byte { return idKey(uint64(rid)) }

// RoleMemberPrefix is the 10-byte prefix of a role's member rows.
func RoleMemberPrefix(rid RoleID) []byte { return append(RoleKey(rid), linkMember) }

// RoleMemberKey is the rowkey of a member row of weibo:roles:
// salt(rid)(1) | rid(8) | 'm' | uid(8), 18 bytes.
func RoleMemberKey(rid RoleID, uid UserID) []byte {
	return appendU64(RoleMemberPrefix(rid), uint64(uid))
}

// RoleQualifier is the qualifier of a role assignment in family o of
// weibo:users: the role id, 8 bytes BE.
func RoleQualifier(rid RoleID) string { return string(U64(uint64(rid))) }

// RoleNameKey is the rowkey of weibo:rolenames: the role name, trimmed and
// lower-cased, UTF-8.
func RoleNameKey(name string) []byte { return []byte(strings.ToLower(strings.TrimSpace(name))) }

// RoleSeqKey is the weibo:roles row holding the role id sequence (c:n);
// 0xff sorts after every salted rowkey.
var RoleSeqKey = []byte("\xffseq")

func encodePriority(p int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(p)) }

func decodePriority(b []byte) (int, bool) {
	if len(b) != 4 {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(b)), true
}

// Role is one role row of weibo:roles.
type Role struct {
	// ID is the role's id.
	ID RoleID
	// Name is the role's name as given.
	Name string
	// MemberCount is the number of users holding the role (an Increment counter).
	MemberCount int64
	// CreatedAt is the role's creation time.
	CreatedAt time.Time
}

// RoleAssignment is one of a user's roles with its priority.
type RoleAssignment struct {
	// Role is the role.
	Role *Role
	// Priority is the assignment's priority, MinPriority..MaxPriority.
	Priority int
}

// RoleEdge is one edge of the roles connection.
type RoleEdge struct {
	// Role is the edge's role.
	Role *Role
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RolePage is one page of the roles connection, ordered by name (ignoring case).
type RolePage struct {
	// Edges are the page's roles.
	Edges []RoleEdge
	// PageInfo is the Relay page info.
	PageInfo PageInfo
}

// RoleMemberEdge is one member of a role.
type RoleMemberEdge struct {
	// User is the member (only the id; load the rest in a batch).
	User UserID
	// Priority is the assignment's priority.
	Priority int
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RoleMemberPage is one page of a role's members, ordered by user id.
type RoleMemberPage struct {
	// Edges are the page's members.
	Edges []RoleMemberEdge
	// PageInfo is the Relay page info.
	PageInfo PageInfo
}

// cleanName trims name and checks it is 1 to max characters of valid UTF-8
// without control characters; the error is BAD_USER_INPUT on field.
func cleanName(field, name string, max int) (string, error) {
	if !utf8.ValidString(name) {
		return "", badInput(field, "%s is not valid UTF-8", field)
	}
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	if n == 0 {
		return "", badInput(field, "%s must not be empty", field)
	}
	if n > max {
		return "", badInput(field, "%s must be at most %d characters, got %d", field, max, n)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", badInput(field, "%s must not contain control characters", field)
	}
	return name, nil
}

func errRoleNameTaken(name string) error {
	return &Error{Code: CodeBadUserInput, Reason: ReasonRoleNameTaken, Field: "name", Message: "a role named " + strconv.Quote(name) + " exists"}
}

func checkPriority(p int) error {
	if p < MinPriority || p > MaxPriority {
		return badInput("priority", "priority must be between %d and %d, got %d", MinPriority, MaxPriority, p)
	}
	return nil
}

// CreateRole creates a role. The name is trimmed and must be 1 to 64
// characters and unique ignoring case. Errors: BAD_USER_INPUT for an empty
// or too long name, and (reason ROLE_NAME_TAKEN) for a taken one.
//
// Writes, in order: a fresh id from the sequence (Increment of RoleSeqKey),
// the weibo:rolenames row with CheckAndPut(absent) — the one atomic step
// that makes the name unique —, then the role row (the commit point). A
// failure between the two leaves an index row whose role row is missing:
// readers skip it, a later create of the same name removes it once it is
// older than 10 s, and Fsck removes it.
func (s *Service) CreateRole(ctx context.Context, name string) (*Role, error) {
	name, err := cleanName("name", name, MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	if r, err := s.RoleByName(ctx, name); err != nil {
		return nil, err
	} else if r != nil {
		return nil, errRoleNameTaken(name)
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: TableRoles, Row: RoleSeqKey, Family: FamCount, Qualifier: ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	rid := RoleID(seq)
	if err := s.claimRoleName(ctx, name, rid); err != nil {
		return nil, err
	}
	if err := s.pairStep(ctx, PairStepCreateRole); err != nil {
		return nil, err
	}
	now := s.nowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: TableRoles, Row: RoleKey(rid), Values: hbase.Values{
		FamInfo:  {ColRoleName: []byte(name), ColCreated: U64(uint64(now))},
		FamCount: {ColMemberCount: U64(0)},
	}}); err != nil {
		return nil, err
	}
	return &Role{ID: rid, Name: name, CreatedAt: time.UnixMilli(now)}, nil
}

// claimRoleName points the name index row of name at rid with
// CheckAndPut(absent). A row that already points at rid counts as claimed
// (a repeated rename); a row whose role row is missing and that is older
// than staleGrace is removed (CheckAndDelete) and the claim retried.
func (s *Service) claimRoleName(ctx context.Context, name string, rid RoleID) error {
	key := RoleNameKey(name)
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: TableRoleNames, Row: key, Values: hbase.Values{
			FamName: {ColRoleID: U64(uint64(rid))}}}, FamName, ColRoleID, nil)
		if err != nil || ok {
			return err
		}
		cur, err := s.st.Get(ctx, &hbase.Get{Table: TableRoleNames, Row: key})
		if err != nil {
			return err
		}
		c := cur.Cell(FamName, ColRoleID)
		if c == nil {
			continue // deleted meanwhile: try again
		}
		owner := RoleID(DecodeU64(c.Value))
		if owner == rid {
			return nil
		}
		roles, err := s.GetRoles(ctx, []RoleID{owner})
		if err != nil {
			return err
		}
		if roles[0] != nil || s.nowMillis()-c.Timestamp < staleGrace.Milliseconds() {
			return errRoleNameTaken(name)
		}
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableRoleNames, Row: key}, FamName, ColRoleID, c.Value); err != nil {
			return err
		}
	}
	return errRoleNameTaken(name)
}

// RenameRole renames a role and returns it. Errors: BAD_USER_INPUT for a bad
// name or (reason ROLE_NAME_TAKEN) one another role has, NOT_FOUND for an
// unknown role.
//
// Writes, in order: the new name's index row with CheckAndPut(absent), the
// role row's name (the commit point), then the CheckAndDelete of the old
// name's index row (only if it still points at this role). A failure after
// the first write leaves an index row for the new name pointing at a role
// of another name: readers skip it, repeating the rename finishes it, Fsck
// removes it. A change of case only rewrites the role row.
func (s *Service) RenameRole(ctx context.Context, rid RoleID, name string) (*Role, error) {
	name, err := cleanName("name", name, MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	role, err := s.mustRole(ctx, rid)
	if err != nil {
		return nil, err
	}
	oldKey, newKey := RoleNameKey(role.Name), RoleNameKey(name)
	sameKey := bytes.Equal(oldKey, newKey)
	if !sameKey {
		if err := s.claimRoleName(ctx, name, rid); err != nil {
			return nil, err
		}
		if err := s.pairStep(ctx, PairStepRenameRole); err != nil {
			return nil, err
		}
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: TableRoles, Row: RoleKey(rid), Values: hbase.Values{
		FamInfo: {ColRoleName: []byte(name)}}}); err != nil {
		return nil, err
	}
	if !sameKey {
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableRoleNames, Row: oldKey}, FamName, ColRoleID, U64(uint64(rid))); err != nil {
			return nil, err
		}
	}
	role.Name = name
	return role, nil
}

// DeleteRole deletes a role and removes it from every user. Errors:
// NOT_FOUND for an unknown role.
//
// Writes, in order: the role row (the commit point: from then on every
// read ignores the role, whatever still refers to it), then, for each member
// row in batches, the users' cells and the member rows, and last the name
// index row (CheckAndDelete, only if it still points at this role). A
// failure part-way leaves cells and rows of a role that no longer exists:
// readers skip them and Fsck removes them.
func (s *Service) DeleteRole(ctx context.Context, rid RoleID) (bool, error) {
	role, err := s.mustRole(ctx, rid)
	if err != nil {
		return false, err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableRoles, Row: RoleKey(rid)}); err != nil {
		return false, err
	}
	if err := s.pairStep(ctx, PairStepDeleteRole); err != nil {
		return false, err
	}
	if err := s.purgeRoleMembers(ctx, rid); err != nil {
		return false, err
	}
	if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableRoleNames, Row: RoleNameKey(role.Name)}, FamName, ColRoleID, U64(uint64(rid))); err != nil {
		return false, err
	}
	return true, nil
}

// purgeRoleMembers deletes, batch by batch, the users' cells of rid and then
// its member rows.
func (s *Service) purgeRoleMembers(ctx context.Context, rid RoleID) error {
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
	prefix := RoleMemberPrefix(rid)
	err := s.st.Scan(ctx, &hbase.Scan{Table: TableRoles, Prefix: prefix}, func(r *hbase.Result) error {
		if len(r.Row) != len(prefix)+8 {
			return nil
		}
		uid := UserID(binary.BigEndian.Uint64(r.Row[len(prefix):]))
		users = append(users, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {RoleQualifier(rid): nil}}})
		members = append(members, &hbase.Delete{Table: TableRoles, Row: bytes.Clone(r.Row)})
		if len(users) >= s.opts.batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// AssignRole gives user uid the role rid with a priority in
// [MinPriority, MaxPriority] and returns the user; re-assigning a role the
// user holds updates the priority. Errors: BAD_USER_INPUT for a priority out
// of range, NOT_FOUND for an unknown user or role.
//
// Writes, in order: the role's member row (the index), then the user's cell
// in family o (the commit point) with CheckAndPut(absent) — which decides
// whether the assignment is new, so that concurrent or repeated calls count
// once in the member counter — or, when the user holds the role already, a
// Put of the new priority; then the counter. A failure between the member
// row and the user's cell leaves a member row without the user's cell: role member lists
// skip it, repeating the call finishes it, Fsck removes it.
func (s *Service) AssignRole(ctx context.Context, uid UserID, rid RoleID, priority int) (*User, error) {
	if err := checkPriority(priority); err != nil {
		return nil, err
	}
	u, err := s.mustUser(ctx, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.mustRole(ctx, rid); err != nil {
		return nil, err
	}
	prio := encodePriority(priority)
	if err := s.st.Put(ctx, &hbase.Put{Table: TableRoles, Row: RoleMemberKey(rid, uid), Values: hbase.Values{
		FamInfo: {ColPriority: prio}}}); err != nil {
		return nil, err
	}
	if err := s.pairStep(ctx, PairStepAssignRole); err != nil {
		return nil, err
	}
	cell := &hbase.Put{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {RoleQualifier(rid): prio}}}
	applied, err := s.st.CheckAndPut(ctx, cell, FamOrg, RoleQualifier(rid), nil)
	if err != nil {
		return nil, err
	}
	if applied {
		if _, err := s.st.Increment(ctx, &hbase.Increment{Table: TableRoles, Row: RoleKey(rid), Family: FamCount, Qualifier: ColMemberCount, Amount: 1}); err != nil {
			return nil, err
		}
	} else if err := s.st.Put(ctx, cell); err != nil {
		return nil, err
	}
	return u, nil
}

// RevokeRole takes role rid from user uid and returns the user; revoking a
// role the user does not hold changes nothing. Errors: NOT_FOUND for an
// unknown user or role.
//
// Writes, in order: CheckAndDelete of the user's cell (the commit point;
// it decides whether this call counts), the counter, then the member row.
// A failure between the two leaves a member row without the user's cell,
// which readers skip and Fsck removes.
func (s *Service) RevokeRole(ctx context.Context, uid UserID, rid RoleID) (*User, error) {
	u, err := s.mustUser(ctx, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.mustRole(ctx, rid); err != nil {
		return nil, err
	}
	cur, err := s.st.Get(ctx, &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}})
	if err != nil {
		return nil, err
	}
	if v := cur.Value(FamOrg, RoleQualifier(rid)); v != nil {
		applied, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {RoleQualifier(rid): nil}}},
			FamOrg, RoleQualifier(rid), v)
		if err != nil {
			return nil, err
		}
		if applied {
			if _, err := s.st.Increment(ctx, &hbase.Increment{Table: TableRoles, Row: RoleKey(rid), Family: FamCount, Qualifier: ColMemberCount, Amount: -1}); err != nil {
				return nil, err
			}
		}
	}
	if err := s.pairStep(ctx, PairStepRevokeRole); err != nil {
		return nil, err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableRoles, Row: RoleMemberKey(rid, uid)}); err != nil {
		return nil, err
	}
	return u, nil
}

// GetRoles reads roles by id with one batched GetMany; the result has one
// entry per id, nil where the role does not exist.
func (s *Service) GetRoles(ctx context.Context, ids []RoleID) ([]*Role, error) {
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: TableRoles, Row: RoleKey(id), Families: []string{FamInfo, FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Role, len(ids))
	for i, r := range rs {
		out[i] = roleFromRow(ids[i], r)
	}
	return out, nil
}

func roleFromRow(rid RoleID, r *hbase.Result) *Role {
	name := r.Value(FamInfo, ColRoleName)
	if name == nil {
		return nil
	}
	return &Role{
		ID:          rid,
		Name:        string(name),
		MemberCount: int64(DecodeU64(r.Value(FamCount, ColMemberCount))),
		CreatedAt:   time.UnixMilli(int64(DecodeU64(r.Value(FamInfo, ColCreated)))),
	}
}

func (s *Service) mustRole(ctx context.Context, rid RoleID) (*Role, error) {
	rs, err := s.GetRoles(ctx, []RoleID{rid})
	if err != nil {
		return nil, err
	}
	if rs[0] == nil {
		return nil, notFound("role %s not found", rid)
	}
	return rs[0], nil
}

// RoleByName returns the role with that name (ignoring case and surrounding
// space), or nil when there is none: one Get of the name index and one of
// the role row, which must still carry the name.
func (s *Service) RoleByName(ctx context.Context, name string) (*Role, error) {
	key := RoleNameKey(name)
	if len(key) == 0 {
		return nil, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: TableRoleNames, Row: key})
	if err != nil {
		return nil, err
	}
	v := r.Value(FamName, ColRoleID)
	if v == nil {
		return nil, nil
	}
	roles, err := s.GetRoles(ctx, []RoleID{RoleID(DecodeU64(v))})
	if err != nil {
		return nil, err
	}
	if roles[0] == nil || !bytes.Equal(RoleNameKey(roles[0].Name), key) {
		return nil, nil // stale index row
	}
	return roles[0], nil
}

// EnsureRole returns the role named name, creating it when there is none.
// Errors as for CreateRole.
func (s *Service) EnsureRole(ctx context.Context, name string) (*Role, error) {
	for attempt := 0; ; attempt++ {
		r, err := s.RoleByName(ctx, name)
		if err != nil || r != nil {
			return r, err
		}
		r, err = s.CreateRole(ctx, name)
		if err == nil || attempt > 0 {
			return r, err
		}
		var e *Error
		if !asError(err, &e) || e.Reason != ReasonRoleNameTaken {
			return nil, err
		}
	}
}

// HasRole reports whether user uid holds the role named roleName: one Get
// of the name index, then one GetMany of the role row and the user's cell.
func (s *Service) HasRole(ctx context.Context, uid UserID, roleName string) (bool, error) {
	key := RoleNameKey(roleName)
	r, err := s.st.Get(ctx, &hbase.Get{Table: TableRoleNames, Row: key})
	if err != nil {
		return false, err
	}
	v := r.Value(FamName, ColRoleID)
	if v == nil {
		return false, nil
	}
	rid := RoleID(DecodeU64(v))
	rs, err := s.st.GetMany(ctx, []*hbase.Get{
		{Table: TableRoles, Row: RoleKey(rid), Families: []string{FamInfo}},
		{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}},
	})
	if err != nil {
		return false, err
	}
	role := roleFromRow(rid, rs[0])
	return role != nil && bytes.Equal(RoleNameKey(role.Name), key) && rs[1].Value(FamOrg, RoleQualifier(rid)) != nil, nil
}

// RequireRole returns nil when uid holds the role named roleName and a
// FORBIDDEN *Error otherwise.
func (s *Service) RequireRole(ctx context.Context, uid UserID, roleName string) error {
	ok, err := s.HasRole(ctx, uid, roleName)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Code: CodeForbidden, Message: "this operation requires the role " + strconv.Quote(roleName)}
	}
	return nil
}

// GrantRoleByName gives the user named username the role named roleName
// (created when missing) with priority, for the command line (`gateway
// admin grant`). Errors: NOT_FOUND for an unknown username, and those of
// EnsureRole and AssignRole.
func (s *Service) GrantRoleByName(ctx context.Context, username, roleName string, priority int) (*User, *Role, error) {
	u, err := s.UserByUsername(ctx, username)
	if err != nil {
		return nil, nil, err
	}
	if u == nil {
		return nil, nil, notFound("no user named %q", username)
	}
	role, err := s.EnsureRole(ctx, roleName)
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.AssignRole(ctx, u.ID, role.ID, priority); err != nil {
		return nil, nil, err
	}
	return u, role, nil
}

// RevokeRoleByName takes the role named roleName from the user named
// username (`gateway admin revoke`). Errors: NOT_FOUND for an unknown user
// or role.
func (s *Service) RevokeRoleByName(ctx context.Context, username, roleName string) error {
	u, err := s.UserByUsername(ctx, username)
	if err != nil {
		return err
	}
	if u == nil {
		return notFound("no user named %q", username)
	}
	role, err := s.RoleByName(ctx, roleName)
	if err != nil {
		return err
	}
	if role == nil {
		return notFound("no role named %q", roleName)
	}
	_, err = s.RevokeRole(ctx, u.ID, role.ID)
	return err
}

// UserRoles returns the roles of each user, highest priority first, ties by
// role name: one GetMany of the users' family o, one GetMany of the roles.
// Cells of roles that no longer exist are skipped.
func (s *Service) UserRoles(ctx context.Context, uids []UserID) ([][]*RoleAssignment, error) {
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	type cell struct {
		rid  RoleID
		prio int
	}
	cells := make([][]cell, len(uids))
	seen := map[RoleID]int{}
	var ids []RoleID
	for i, r := range rs {
		for _, c := range r.Family(FamOrg) {
			p, ok := decodePriority(c.Value)
			if len(c.Qualifier) != 8 || !ok {
				continue
			}
			rid := RoleID(binary.BigEndian.Uint64([]byte(c.Qualifier)))
			cells[i] = append(cells[i], cell{rid, p})
			if _, ok := seen[rid]; !ok {
				seen[rid] = len(ids)
				ids = append(ids, rid)
			}
		}
	}
	var roles []*Role
	if len(ids) > 0 {
		if roles, err = s.GetRoles(ctx, ids); err != nil {
			return nil, err
		}
	}
	out := make([][]*RoleAssignment, len(uids))
	for i, cs := range cells {
		out[i] = []*RoleAssignment{}
		for _, c := range cs {
			if role := roles[seen[c.rid]]; role != nil {
				out[i] = append(out[i], &RoleAssignment{Role: role, Priority: c.prio})
			}
		}
		slices.SortFunc(out[i], func(a, b *RoleAssignment) int {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority)
			}
			return cmp.Or(strings.Compare(strings.ToLower(a.Role.Name), strings.ToLower(b.Role.Name)),
				strings.Compare(a.Role.Name, b.Role.Name), cmp.Compare(a.Role.ID, b.Role.ID))
		})
	}
	return out, nil
}

// Roles pages through every role by name (ignoring case): a scan of
// weibo:rolenames, whose rowkeys are the lower-cased names, and one GetMany
// of the page's role rows; index rows whose role is gone or renamed are
// skipped. Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) Roles(ctx context.Context, first *int, afterCur *string) (*RolePage, error) {
	n, err := pageSize(first)
	if err != nil {
		return nil, err
	}
	last, err := decodeVarCursor(afterCur, cursorRoleNames, 4*MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	var start []byte
	if last != nil {
		start = append(last, 0)
	}
	items, keys, err := scanVerified(ctx, s.st, &hbase.Scan{Table: TableRoleNames, Start: start}, n,
		func(ctx context.Context, rows []*hbase.Result) ([]*Role, error) {
			ids := make([]RoleID, len(rows))
			for i, r := range rows {
				ids[i] = RoleID(DecodeU64(r.Value(FamName, ColRoleID)))
			}
			roles, err := s.GetRoles(ctx, ids)
			if err != nil {
				return nil, err
			}
			for i, role := range roles {
				if role != nil && !bytes.Equal(RoleNameKey(role.Name), rows[i].Row) {
					roles[i] = nil
				}
			}
			return roles, nil
		})
	if err != nil {
		return nil, err
	}
	page := &RolePage{}
	page.Edges, page.PageInfo = buildPage(items, n, func(i int, role *Role) RoleEdge {
		return RoleEdge{Role: role, Cursor: encodeCursor(cursorRoleNames, keys[i])}
	}, func(e *RoleEdge) *string { return &e.Cursor })
	return page, nil
}

// RoleMembers pages through the members of role rid by user id, with their
// priorities: a prefix scan of the role's member rows and one GetMany of
// the users' family o per page, which is authoritative (member rows without
// the user's cell are skipped; the priority is the user's). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) RoleMembers(ctx context.Context, rid RoleID, first *int, afterCur *string) (*RoleMemberPage, error) {
	prefix := RoleMemberPrefix(rid)
	n, start, err := pageStart(first, afterCur, cursorRoleMembers, 8, prefix)
	if err != nil {
		return nil, err
	}
	qual := RoleQualifier(rid)
	items, keys, err := scanVerified(ctx, s.st, &hbase.Scan{Table: TableRoles, Prefix: prefix, Start: start}, n,
		func(ctx context.Context, rows []*hbase.Result) ([]*RoleMemberEdge, error) {
			gets := make([]*hbase.Get, len(rows))
			for i, r := range rows {
				gets[i] = &hbase.Get{Table: TableUsers, Row: UserKey(linkTarget(r.Row, prefix)), Families: []string{FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*RoleMemberEdge, len(rows))
			for i, u := range us {
				if p, ok := decodePriority(u.Value(FamOrg, qual)); ok && len(rows[i].Row) == len(prefix)+8 {
					out[i] = &RoleMemberEdge{User: linkTarget(rows[i].Row, prefix), Priority: p}
				}
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	page := &RoleMemberPage{}
	page.Edges, page.PageInfo = buildPage(items, n, func(i int, e *RoleMemberEdge) RoleMemberEdge {
		e.Cursor = encodeCursor(cursorRoleMembers, keys[i][len(prefix):])
		return *e
	}, func(e *RoleMemberEdge) *string { return &e.Cursor })
	return page, nil
}

// linkTarget decodes the 8-byte id after prefix in a member or child
// rowkey (0 when the rowkey is malformed).
func linkTarget(row, prefix []byte) UserID {
	if len(row) != len(prefix)+8 {
		return 0
	}
	return UserID(binary.BigEndian.Uint64(row[len(prefix):]))
}

// scanVerified reads the rows of sc (whose Start is where the page begins)
// chunk by chunk and asks verify, with one batched read per chunk, which of
// them are valid (nil: skip, e.g. the index half of a half-written pair).
// It stops once n+1 valid rows are found or the range ends, and returns the
// valid items with their rowkeys.
func scanVerified[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) ([]*T, [][]byte, error) {
	var (
		items []*T
		keys  [][]byte
	)
	scan := *sc
	for {
		want := n + 1 - len(items)
		scan.Limit = want
		rows, err := hbase.ScanAll(ctx, st, &scan)
		if err != nil {
			return nil, nil, err
		}
		if len(rows) == 0 {
			break
		}
		scan.Start = append(bytes.Clone(rows[len(rows)-1].Row), 0)
		vs, err := verify(ctx, rows)
		if err != nil {
			return nil, nil, err
		}
		for i, v := range vs {
			if v != nil {
				items = append(items, v)
				keys = append(keys, rows[i].Row)
			}
		}
		if len(items) > n || len(rows) < want {
			break
		}
	}
	return items, keys, nil
}

// decodeVarCursor decodes a cursor of kind whose payload has 1 to max
// bytes; nil or "" gives nil. Malformed: BAD_USER_INPUT on "after".
func decodeVarCursor(after *string, kind byte, max int) ([]byte, error) {
	if after == nil || *after == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*after)
	if err != nil || len(b) < 2 || len(b) > max+1 || b[0] != kind {
		return nil, badInput("after", "malformed cursor %s", Excerpt(*after))
	}
	return b[1:], nil
}
