package weibo

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Departments (seed 001, case 2: "组织架构设计"): a company's department tree
// and which users belong to which department. The seed's Dep table (cf1:
// name and up = parent; cf2: one column per sub-department) maps to
// weibo:departments, made tall:
//
//   - a department row (name, parent id; the parent is AUTHORITATIVE: a
//     department is a child of P exactly when its row says up = P);
//   - child rows under the parent, one per sub-department: the index that
//     lists a department's children in id (creation) order. Top-level
//     departments are the children of the virtual root 0, so listing them is
//     a prefix scan too, never a full-table scan;
//   - member rows under the department, one per user, the index that lists
//     its members; the user's weibo:users cell o:dp is AUTHORITATIVE (a user
//     belongs to at most one department).
//
// Reads check every child row against the child's department row and every
// member row against the user's cell (one batched GetMany per page) and
// skip those that disagree, so a half-written pair is never visible.

// DeptID is a department's id, allocated from a sequence. In GraphQL it is
// the decimal string; in rowkeys 8 bytes big-endian. 0 is the virtual root
// whose children are the top-level departments.
type DeptID uint64

// String returns the decimal form used as the GraphQL ID.
func (id DeptID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseDeptID parses a GraphQL department ID (decimal, 1 to 20 digits, no
// sign or leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseDeptID(s string) (DeptID, error) {
	n, err := ParseUserID(s)
	return DeptID(n), err
}

// RootDept is the virtual root: the parent of top-level departments. It has
// no department row, only child rows.
const RootDept DeptID = 0

// MaxDepartmentNameLength is the longest department name, in characters.
const MaxDepartmentNameLength = 64

// MaxDepartmentDepth is the deepest a department may be (a top-level
// department has depth 1). Creates and moves beyond it are refused; reads
// that walk up the tree stop after it.
const MaxDepartmentDepth = 32

// Reasons of department errors (extensions.reason, code BAD_USER_INPUT).
const (
	// ReasonDepartmentCycle: moveDepartment under itself or a descendant.
	ReasonDepartmentCycle = "DEPARTMENT_CYCLE"
	// ReasonDepartmentNotEmpty: deleteDepartment without cascade of a
	// department that has sub-departments or members.
	ReasonDepartmentNotEmpty = "DEPARTMENT_NOT_EMPTY"
	// ReasonDepartmentTooDeep: a create or move beyond MaxDepartmentDepth.
	ReasonDepartmentTooDeep = "DEPARTMENT_TOO_DEEP"
)

// DeptKey is the rowkey of a department row of weibo:departments:
// salt(did)(1) | did(8).
func DeptKey(did DeptID) []byte { return idKey(uint64(did)) }

// DeptChildPrefix is the 10-byte prefix of a department's child rows.
func DeptChildPrefix(parent DeptID) []byte { return append(DeptKey(parent), linkChild) }

// DeptChildKey is the rowkey of a child row: salt(parent)(1) | parent(8) |
// 'c' | child(8), 18 bytes.
func DeptChildKey(parent, child DeptID) []byte {
	return appendU64(DeptChildPrefix(parent), uint64(child))
}

// DeptMemberPrefix is the 10-byte prefix of a department's member rows.
func DeptMemberPrefix(did DeptID) []byte { return append(DeptKey(did), linkMember) }

// DeptMemberKey is the rowkey of a member row: salt(did)(1) | did(8) | 'm' |
// uid(8), 18 bytes.
func DeptMemberKey(did DeptID, uid UserID) []byte {
	return appendU64(DeptMemberPrefix(did), uint64(uid))
}

// DeptSeqKey is the weibo:departments row holding the department id
// sequence (family i, qualifier n, an Increment counter).
var DeptSeqKey = []byte("\xffseq")

// Department is one department row.
type Department struct {
	// ID is the department's id.
	ID DeptID
	// Name is the department's name.
	Name string
	// Parent is the parent's id, RootDept for a top-level department.
	Parent DeptID
	// CreatedAt is the creation time.
	CreatedAt time.Time
}

// DepartmentEdge is one edge of a departments connection.
type DepartmentEdge struct {
	// Department is the edge's department.
	Department *Department
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// DepartmentPage is one page of a departments connection, by id (creation order).
type DepartmentPage struct {
	// Edges are the page's departments.
	Edges []DepartmentEdge
	// PageInfo is the Relay page info.
	PageInfo PageInfo
}

func errDeptNotFound(field string, did DeptID) error {
	return &Error{Code: CodeNotFound, Field: field, Message: "department " + did.String() + " not found"}
}

func linkValue(ms int64) hbase.Values { return hbase.Values{FamInfo: {ColLinkAt: U64(uint64(ms))}} }

// GetDepartments reads departments by id with one batched GetMany; the
// result has one entry per id, nil where the department does not exist.
func (s *Service) GetDepartments(ctx context.Context, ids []DeptID) ([]*Department, error) {
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: TableDepartments, Row: DeptKey(id), Families: []string{FamInfo}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Department, len(ids))
	for i, r := range rs {
		if ids[i] != RootDept {
			out[i] = deptFromRow(ids[i], r)
		}
	}
	return out, nil
}

func deptFromRow(did DeptID, r *hbase.Result) *Department {
	name := r.Value(FamInfo, ColDeptName)
	if name == nil {
		return nil
	}
	return &Department{
		ID:        did,
		Name:      string(name),
		Parent:    DeptID(DecodeU64(r.Value(FamInfo, ColParent))),
		CreatedAt: time.UnixMilli(int64(DecodeU64(r.Value(FamInfo, ColCreated)))),
	}
}

func (s *Service) mustDepartment(ctx context.Context, field string, did DeptID) (*Department, error) {
	ds, err := s.GetDepartments(ctx, []DeptID{did})
	if err != nil {
		return nil, err
	}
	if ds[0] == nil {
		return nil, errDeptNotFound(field, did)
	}
	return ds[0], nil
}

// Ancestors returns d's ancestors, root first, excluding d: one Get per
// level, at most MaxDepartmentDepth. The walk stops at a missing parent or
// a repeated id (which only a concurrent move race could leave, and Fsck
// reports).
func (s *Service) Ancestors(ctx context.Context, d *Department) ([]*Department, error) {
	var up []*Department
	seen := map[DeptID]bool{d.ID: true}
	for id := d.Parent; id != RootDept && !seen[id] && len(up) < MaxDepartmentDepth; {
		seen[id] = true
		ds, err := s.GetDepartments(ctx, []DeptID{id})
		if err != nil {
			return nil, err
		}
		if ds[0] == nil {
			break
		}
		up = append(up, ds[0])
		id = ds[0].Parent
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up, nil
}

// depth returns the depth of department did (RootDept: 0).
func (s *Service) depth(ctx context.Context, d *Department) (int, error) {
	if d == nil {
		return 0, nil
	}
	up, err := s.Ancestors(ctx, d)
	return len(up) + 1, err
}

// CreateDepartment creates a department under parent (RootDept: top level)
// and returns it. Names are 1 to 64 characters, trimmed; siblings may share
// a name. Errors: BAD_USER_INPUT for a bad name or (reason
// DEPARTMENT_TOO_DEEP) a parent at MaxDepartmentDepth, NOT_FOUND for an
// unknown parent.
//
// Writes, in order: a fresh id (Increment of DeptSeqKey), the parent's
// child row (the index), then the department row (the commit point). A
// failure between the two leaves a child row without a department: readers
// skip it and Fsck removes it.
func (s *Service) CreateDepartment(ctx context.Context, name string, parent DeptID) (*Department, error) {
	name, err := cleanName("name", name, MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	if parent != RootDept {
		p, err := s.mustDepartment(ctx, "parentId", parent)
		if err != nil {
			return nil, err
		}
		if d, err := s.depth(ctx, p); err != nil {
			return nil, err
		} else if d >= MaxDepartmentDepth {
			return nil, &Error{Code: CodeBadUserInput, Field: "parentId", Reason: ReasonDepartmentTooDeep,
				Message: "departments may be at most " + strconv.Itoa(MaxDepartmentDepth) + " levels deep"}
		}
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: TableDepartments, Row: DeptSeqKey, Family: FamInfo, Qualifier: ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	did := DeptID(seq)
	now := s.nowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptChildKey(parent, did), Values: linkValue(now)}); err != nil {
		return nil, err
	}
	if err := s.pairStep(ctx, PairStepCreateDepartment); err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptKey(did), Values: hbase.Values{FamInfo: {
		ColDeptName: []byte(name), ColParent: U64(uint64(parent)), ColCreated: U64(uint64(now)),
	}}}); err != nil {
		return nil, err
	}
	return &Department{ID: did, Name: name, Parent: parent, CreatedAt: time.UnixMilli(now)}, nil
}

// RenameDepartment renames a department and returns it (one Put: the name
// lives only in the department row). Errors: BAD_USER_INPUT for a bad name,
// NOT_FOUND for an unknown department.
func (s *Service) RenameDepartment(ctx context.Context, did DeptID, name string) (*Department, error) {
	name, err := cleanName("name", name, MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	d, err := s.mustDepartment(ctx, "id", did)
	if err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptKey(did), Values: hbase.Values{FamInfo: {ColDeptName: []byte(name)}}}); err != nil {
		return nil, err
	}
	d.Name = name
	return d, nil
}

// MoveDepartment moves department did, with its subtree, under parent
// (RootDept: to the top level) and returns it. Errors: NOT_FOUND for an
// unknown department or parent; BAD_USER_INPUT with reason DEPARTMENT_CYCLE
// when parent is did itself or one of its descendants (found by walking up
// from parent), DEPARTMENT_TOO_DEEP when the subtree would end up deeper than
// MaxDepartmentDepth, CONCURRENT_UPDATE when the department moved meanwhile.
//
// Writes, in order: the new parent's child row, the department's parent with
// CheckAndPut (expecting the parent it had when read: the commit point),
// then the delete of the old parent's child row. A failure leaves a child
// row that disagrees with the department row: readers skip it and Fsck
// removes it.
func (s *Service) MoveDepartment(ctx context.Context, did, parent DeptID) (*Department, error) {
	d, err := s.mustDepartment(ctx, "id", did)
	if err != nil {
		return nil, err
	}
	if parent == d.Parent {
		return d, nil
	}
	pdepth := 0
	if parent != RootDept {
		if parent == did {
			return nil, errCycle()
		}
		p, err := s.mustDepartment(ctx, "parentId", parent)
		if err != nil {
			return nil, err
		}
		up, err := s.Ancestors(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, a := range up {
			if a.ID == did {
				return nil, errCycle()
			}
		}
		pdepth = len(up) + 1
	}
	_, height, err := s.subtree(ctx, d)
	if err != nil {
		return nil, err
	}
	if pdepth+height > MaxDepartmentDepth {
		return nil, &Error{Code: CodeBadUserInput, Field: "parentId", Reason: ReasonDepartmentTooDeep,
			Message: "the move would make the tree deeper than " + strconv.Itoa(MaxDepartmentDepth) + " levels"}
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptChildKey(parent, did), Values: linkValue(s.nowMillis())}); err != nil {
		return nil, err
	}
	if err := s.pairStep(ctx, PairStepMoveDepartment); err != nil {
		return nil, err
	}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: TableDepartments, Row: DeptKey(did), Values: hbase.Values{FamInfo: {ColParent: U64(uint64(parent))}}},
		FamInfo, ColParent, U64(uint64(d.Parent)))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Code: CodeBadUserInput, Field: "id", Reason: ReasonConcurrentUpdate, Message: "department " + did.String() + " was changed meanwhile; retry"}
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptChildKey(d.Parent, did)}); err != nil {
		return nil, err
	}
	d.Parent = parent
	return d, nil
}

func errCycle() error {
	return &Error{Code: CodeBadUserInput, Field: "parentId", Reason: ReasonDepartmentCycle,
		Message: "a department cannot be moved under itself or one of its sub-departments"}
}

// subtree returns d and its descendants in breadth-first order (d first)
// and the subtree's height (1 for a leaf), reading the children of each
// level with verified scans.
func (s *Service) subtree(ctx context.Context, d *Department) ([]*Department, int, error) {
	all := []*Department{d}
	seen := map[DeptID]bool{d.ID: true}
	level, height := []*Department{d}, 1
	for len(level) > 0 {
		var next []*Department
		for _, p := range level {
			kids, err := s.allChildren(ctx, p.ID)
			if err != nil {
				return nil, 0, err
			}
			for _, k := range kids {
				if !seen[k.ID] {
					seen[k.ID] = true
					next = append(next, k)
				}
			}
		}
		if len(next) > 0 {
			height++
		}
		all = append(all, next...)
		level = next
	}
	return all, height, nil
}

// allChildren returns every (verified) child of did.
func (s *Service) allChildren(ctx context.Context, did DeptID) ([]*Department, error) {
	var out []*Department
	var cur *string
	for {
		page, err := s.DepartmentChildren(ctx, did, ptr(MaxPageSize), cur)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Edges {
			out = append(out, e.Department)
		}
		if !page.PageInfo.HasNextPage {
			return out, nil
		}
		cur = page.PageInfo.EndCursor
	}
}

func ptr[T any](v T) *T { return &v }

// DeleteDepartment deletes a department. Without cascade it refuses one
// that has sub-departments or members (BAD_USER_INPUT, reason
// DEPARTMENT_NOT_EMPTY); with cascade it deletes the whole subtree, deepest
// departments first, and their members leave them (they then belong to no
// department). Errors: NOT_FOUND for an unknown department.
//
// Writes, per department, in order: each member's cell o:dp
// (CheckAndDelete, only if it still names the department) then the member
// rows; the department row (the commit point); the parent's child row;
// then any row left under the department's prefix. Deepest first means a
// failure part-way leaves a smaller but consistent tree; what it leaves
// behind (a child row of a deleted department) readers skip and Fsck
// removes.
func (s *Service) DeleteDepartment(ctx context.Context, did DeptID, cascade bool) (bool, error) {
	d, err := s.mustDepartment(ctx, "id", did)
	if err != nil {
		return false, err
	}
	one := 1
	if !cascade {
		kids, err := s.DepartmentChildren(ctx, did, &one, nil)
		if err != nil {
			return false, err
		}
		members, err := s.DepartmentMembers(ctx, did, &one, nil)
		if err != nil {
			return false, err
		}
		if len(kids.Edges) > 0 || len(members.Edges) > 0 {
			return false, &Error{Code: CodeBadUserInput, Field: "id", Reason: ReasonDepartmentNotEmpty,
				Message: "department " + did.String() + " has sub-departments or members; pass cascade: true to delete them too"}
		}
		return true, s.deleteOne(ctx, d)
	}
	all, _, err := s.subtree(ctx, d)
	if err != nil {
		return false, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if err := s.deleteOne(ctx, all[i]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// deleteOne deletes one department whose sub-departments are gone.
func (s *Service) deleteOne(ctx context.Context, d *Department) error {
	prefix := DeptMemberPrefix(d.ID)
	var dels []*hbase.Delete
	err := s.st.Scan(ctx, &hbase.Scan{Table: TableDepartments, Prefix: prefix}, func(r *hbase.Result) error {
		if uid := linkTarget(r.Row, prefix); uid != 0 {
			if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {ColUserDept: nil}}},
				FamOrg, ColUserDept, U64(uint64(d.ID))); err != nil {
				return err
			}
		}
		dels = append(dels, &hbase.Delete{Table: TableDepartments, Row: bytes.Clone(r.Row)})
		return nil
	})
	if err != nil {
		return err
	}
	if len(dels) > 0 {
		if err := s.st.DeleteMany(ctx, dels); err != nil {
			return err
		}
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptKey(d.ID)}); err != nil {
		return err
	}
	if err := s.pairStep(ctx, PairStepDeleteDepartment); err != nil {
		return err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptChildKey(d.Parent, d.ID)}); err != nil {
		return err
	}
	// Debris under the department's own prefix (stale child or member rows).
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: TableDepartments, Prefix: DeptKey(d.ID)})
	if err != nil || len(rows) == 0 {
		return err
	}
	dels = dels[:0]
	for _, r := range rows {
		dels = append(dels, &hbase.Delete{Table: TableDepartments, Row: r.Row})
	}
	return s.st.DeleteMany(ctx, dels)
}

// SetUserDepartment puts user uid into department did, or into none when
// did is RootDept, and returns the user. Errors: NOT_FOUND for an unknown
// user or department.
//
// Writes, in order: the new department's member row (the index), the
// user's cell o:dp with CheckAndPut (or CheckAndDelete for none) expecting
// the value it had when read (the commit point; a concurrent change makes
// the call re-read and retry), then the delete of the old department's
// member row. A failure leaves a member row the user's cell disagrees with:
// readers skip it and Fsck removes it.
func (s *Service) SetUserDepartment(ctx context.Context, uid UserID, did DeptID) (*User, error) {
	u, err := s.mustUser(ctx, uid)
	if err != nil {
		return nil, err
	}
	if did != RootDept {
		if _, err := s.mustDepartment(ctx, "departmentId", did); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		cur, err := s.st.Get(ctx, &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}})
		if err != nil {
			return nil, err
		}
		oldRaw := cur.Value(FamOrg, ColUserDept)
		old := DeptID(DecodeU64(oldRaw))
		if old == did {
			return u, nil
		}
		var applied bool
		if did != RootDept {
			if err := s.st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptMemberKey(did, uid), Values: linkValue(s.nowMillis())}); err != nil {
				return nil, err
			}
			if err := s.pairStep(ctx, PairStepSetUserDepartment); err != nil {
				return nil, err
			}
			applied, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {ColUserDept: U64(uint64(did))}}},
				FamOrg, ColUserDept, oldRaw)
		} else {
			applied, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {ColUserDept: nil}}},
				FamOrg, ColUserDept, oldRaw)
		}
		if err != nil {
			return nil, err
		}
		if !applied {
			if attempt >= 3 {
				return nil, &Error{Code: CodeBadUserInput, Field: "userId", Reason: ReasonConcurrentUpdate, Message: "the user's department keeps changing; retry"}
			}
			continue
		}
		if old != RootDept {
			if err := s.st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptMemberKey(old, uid)}); err != nil {
				return nil, err
			}
		}
		return u, nil
	}
}

// UserDepartments returns each user's department (nil for none, or when
// the department no longer exists): one GetMany of the users' cells, one of
// the departments.
func (s *Service) UserDepartments(ctx context.Context, uids []UserID) ([]*Department, error) {
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	ids := make([]DeptID, len(uids))
	var want []DeptID
	for i, r := range rs {
		if ids[i] = DeptID(DecodeU64(r.Value(FamOrg, ColUserDept))); ids[i] != RootDept {
			want = append(want, ids[i])
		}
	}
	out := make([]*Department, len(uids))
	if len(want) == 0 {
		return out, nil
	}
	ds, err := s.GetDepartments(ctx, want)
	if err != nil {
		return nil, err
	}
	byID := map[DeptID]*Department{}
	for _, d := range ds {
		if d != nil {
			byID[d.ID] = d
		}
	}
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out, nil
}

// DepartmentChildren pages through the sub-departments of did (RootDept:
// the top-level departments) in id order: a prefix scan of its child rows
// and one GetMany of the children's rows per page; a child row whose
// department is gone or names another parent is skipped. Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) DepartmentChildren(ctx context.Context, did DeptID, first *int, afterCur *string) (*DepartmentPage, error) {
	prefix := DeptChildPrefix(did)
	n, start, err := pageStart(first, afterCur, cursorDepartments, 8, prefix)
	if err != nil {
		return nil, err
	}
	items, keys, err := scanVerified(ctx, s.st, &hbase.Scan{Table: TableDepartments, Prefix: prefix, Start: start}, n,
		func(ctx context.Context, rows []*hbase.Result) ([]*Department, error) {
			ids := make([]DeptID, len(rows))
			for i, r := range rows {
				ids[i] = DeptID(linkTarget(r.Row, prefix))
			}
			ds, err := s.GetDepartments(ctx, ids)
			if err != nil {
				return nil, err
			}
			for i, d := range ds {
				if d != nil && d.Parent != did {
					ds[i] = nil
				}
			}
			return ds, nil
		})
	if err != nil {
		return nil, err
	}
	page := &DepartmentPage{}
	page.Edges, page.PageInfo = buildPage(items, n, func(i int, d *Department) DepartmentEdge {
		return DepartmentEdge{Department: d, Cursor: encodeCursor(cursorDepartments, keys[i][len(prefix):])}
	}, func(e *DepartmentEdge) *string { return &e.Cursor })
	return page, nil
}

// TopDepartments pages through the top-level departments (the children of
// RootDept) in id order. Errors as for DepartmentChildren.
func (s *Service) TopDepartments(ctx context.Context, first *int, afterCur *string) (*DepartmentPage, error) {
	return s.DepartmentChildren(ctx, RootDept, first, afterCur)
}

// DepartmentMembers pages through the members of did by user id: a prefix
// scan of its member rows and one GetMany of the users' cells per page
// (member rows the user's cell disagrees with are skipped). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) DepartmentMembers(ctx context.Context, did DeptID, first *int, afterCur *string) (*UserPage, error) {
	prefix := DeptMemberPrefix(did)
	n, start, err := pageStart(first, afterCur, cursorUsers, 8, prefix)
	if err != nil {
		return nil, err
	}
	want := U64(uint64(did))
	items, keys, err := scanVerified(ctx, s.st, &hbase.Scan{Table: TableDepartments, Prefix: prefix, Start: start}, n,
		func(ctx context.Context, rows []*hbase.Result) ([]*UserID, error) {
			gets := make([]*hbase.Get, len(rows))
			for i, r := range rows {
				gets[i] = &hbase.Get{Table: TableUsers, Row: UserKey(linkTarget(r.Row, prefix)), Families: []string{FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*UserID, len(rows))
			for i, u := range us {
				if uid := linkTarget(rows[i].Row, prefix); uid != 0 && bytes.Equal(u.Value(FamOrg, ColUserDept), want) {
					out[i] = &uid
				}
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	page := &UserPage{}
	page.Edges, page.PageInfo = buildPage(items, n, func(i int, uid *UserID) UserEdge {
		return UserEdge{User: *uid, Cursor: encodeCursor(cursorUsers, keys[i][len(prefix):])}
	}, userCursor)
	return page, nil
}

// asError is errors.As for *Error.
func asError(err error, e **Error) bool { return errors.As(err, e) }
