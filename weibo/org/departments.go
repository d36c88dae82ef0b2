package org

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Departments (seed 001, case 2: "组织架构设计"): a company's department tree
// and which users belong to which department. The seed's Dep table (cf1:
// name and up = parent; cf2: one column per sub-department) maps to
// weibo:departments, made tall:
//
//   - a department row (name, parent id; the parent is the AUTHORITY: a
//     department is a child of P exactly when its row says up = P);
//   - child rows under the parent, one per sub-department: the index that
//     lists a department's children in id (creation) order. Top-level
//     departments are the children of the virtual root 0, so listing them is
//     a prefix scan too, never a full-table scan;
//   - member rows under the department, one per user, the index that lists
//     its members; the user's weibo:users cell o:dp is the AUTHORITY (a user
//     belongs to at most one department).
//
// Reads check every child row against the child's department row and every
// member row against the user's cell (one batched GetMany per page) and
// skip those that disagree, so a half-written pair is never visible.

// MaxDepartmentNameLength is the longest department name, in characters.
const MaxDepartmentNameLength = 64

// MaxDepartmentDepth is the deepest a department may be (a top-level
// department has depth 1). Creates and moves beyond it are refused; reads
// that walk up the tree stop after it.
const MaxDepartmentDepth = 32

// Department is one department row.
type Department struct {
	// ID is the department's id.
	ID weibo.DeptID
	// Name is the department's name.
	Name string
	// Parent is the parent's id, RootDept for a top-level department.
	Parent weibo.DeptID
	// CreatedAt is the creation time.
	CreatedAt time.Time
	// MemberCount is the number of users directly in the department (a
	// kept counter: memberCount).
	MemberCount int64

	// path is the department's ancestors as its row keeps them, top level
	// first; pathOK is false when the row has none (see ancestorsOf).
	path   []weibo.DeptID
	pathOK bool
}

// DepartmentEdge is one edge of a DepartmentConnection.
type DepartmentEdge struct {
	// Department is the edge's department.
	Department *Department
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// DepartmentConnection is one page of departments (a department's children
// or the top level), by id (creation order).
type DepartmentConnection struct {
	// Edges are the page's departments.
	Edges []DepartmentEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
}

// GetDepartments reads departments by id with one batched GetMany; the
// result has one entry per id, nil where the department does not exist.
func (s *Service) GetDepartments(ctx context.Context, ids []weibo.DeptID) (_ []*Department, err error) {
	defer weibo.Wrap(&err, "get departments")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Departments, Row: tables.DeptKey(id), Families: []string{tables.FamInfo}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Department, len(ids))
	for i, r := range rs {
		if ids[i] != weibo.RootDept {
			out[i] = deptFromRow(ids[i], r)
		}
	}
	return out, nil
}

func deptFromRow(did weibo.DeptID, r *hbase.Result) *Department {
	name := r.Value(tables.FamInfo, tables.ColDeptName)
	if name == nil {
		return nil
	}
	path, ok := tables.DepartmentPath(r)
	return &Department{
		ID:          did,
		Name:        string(name),
		Parent:      tables.DepartmentParent(r),
		CreatedAt:   time.UnixMilli(tables.CreatedAt(r)),
		MemberCount: tables.CounterIn(r, tables.FamInfo, tables.ColDeptMemberCount),
		path:        path,
		pathOK:      ok,
	}
}

func (s *Service) existingDepartment(ctx context.Context, field string, did weibo.DeptID) (*Department, error) {
	ds, err := s.GetDepartments(ctx, []weibo.DeptID{did})
	if err != nil {
		return nil, err
	}
	if ds[0] == nil {
		return nil, errDeptNotFound(field, did)
	}
	return ds[0], nil
}

// Ancestors returns d's ancestors, root first, excluding d (ancestorsOf).
func (s *Service) Ancestors(ctx context.Context, d *Department) (_ []*Department, err error) {
	defer weibo.Wrap(&err, "ancestors")
	return s.ancestorsOf(ctx, d)
}

// walkAncestors returns d's ancestors, root first, excluding d: one Get per
// level, at most MaxDepartmentDepth. The walk stops at a missing parent or
// a repeated id (which only a concurrent move race could leave, and Fsck
// reports).
func (s *Service) walkAncestors(ctx context.Context, d *Department) ([]*Department, error) {
	var up []*Department
	seen := map[weibo.DeptID]bool{d.ID: true}
	for id := d.Parent; id != weibo.RootDept && !seen[id] && len(up) < MaxDepartmentDepth; {
		seen[id] = true
		ds, err := s.GetDepartments(ctx, []weibo.DeptID{id})
		if err != nil {
			return nil, err
		}
		if ds[0] == nil {
			break
		}
		up = append(up, ds[0])
		id = ds[0].Parent
	}
	slices.Reverse(up)
	return up, nil
}

// CreateDepartment creates a department under parent (RootDept: top level)
// and returns it. Names are 1 to 64 characters, trimmed; siblings may share
// a name. Errors: BAD_USER_INPUT for a bad name or (reason
// DEPARTMENT_TOO_DEEP) a parent at MaxDepartmentDepth, NOT_FOUND for an
// unknown parent.
//
// Writes, in order: a fresh id (Increment of tables.SeqKey), the parent's
// child row (the index), then the department row (the commit point). A
// failure between the two leaves a child row without a department: readers
// skip it and Fsck removes it.
func (s *Service) CreateDepartment(ctx context.Context, name string, parent weibo.DeptID) (_ *Department, err error) {
	defer weibo.Wrap(&err, "create department")
	name, err = cleanName("name", name, MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	var path []weibo.DeptID // the new department's ancestors
	if parent != weibo.RootDept {
		p, err := s.existingDepartment(ctx, "parentId", parent)
		if err != nil {
			return nil, err
		}
		up, err := s.ancestorsOf(ctx, p)
		if err != nil {
			return nil, err
		}
		if len(up)+1 >= MaxDepartmentDepth {
			return nil, errTooDeep("departments may be at most " + strconv.Itoa(MaxDepartmentDepth) + " levels deep")
		}
		path = append(idsOf(up), parent)
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Departments, Row: tables.SeqKey, Family: tables.FamInfo, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	did := weibo.DeptID(seq)
	rec, err := s.record(ctx, ActionDeptCreate, deptNode(did), nil, map[string]any{"name": name, "parent": deptRef(parent)})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	now := s.nowMillis()
	if err := s.putLink(ctx, tables.DeptChildKey(parent, did), now); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, PairStepCreateDepartment); err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: hbase.Values{tables.FamInfo: {
		tables.ColDeptName: []byte(name), tables.ColParent: tables.EncodeID(parent), tables.ColCreated: tables.EncodeMillis(now),
		tables.ColPath: tables.EncodePath(path), tables.ColDeptMemberCount: tables.EncodeCounter(0),
	}}}); err != nil {
		return nil, err
	}
	rec.committed = true
	return &Department{ID: did, Name: name, Parent: parent, CreatedAt: time.UnixMilli(now), path: path, pathOK: true}, nil
}

// RenameDepartment renames a department and returns it (one Put: the name
// lives only in the department row). Errors: BAD_USER_INPUT for a bad name,
// NOT_FOUND for an unknown department.
func (s *Service) RenameDepartment(ctx context.Context, did weibo.DeptID, name string) (_ *Department, err error) {
	defer weibo.Wrapf(&err, "rename department %s", did)
	name, err = cleanName("name", name, MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	d, err := s.existingDepartment(ctx, "id", did)
	if err != nil {
		return nil, err
	}
	rec, err := s.record(ctx, ActionDeptRename, deptNode(did), map[string]any{"name": d.Name}, map[string]any{"name": name})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: hbase.Values{tables.FamInfo: {tables.ColDeptName: []byte(name)}}}); err != nil {
		return nil, err
	}
	rec.committed = true
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
func (s *Service) MoveDepartment(ctx context.Context, did, parent weibo.DeptID) (_ *Department, err error) {
	defer weibo.Wrapf(&err, "move department %s under %s", did, parent)
	d, err := s.existingDepartment(ctx, "id", did)
	if err != nil {
		return nil, err
	}
	if parent == d.Parent {
		return d, nil
	}
	var base []weibo.DeptID // did's new ancestors
	if parent != weibo.RootDept {
		if parent == did {
			return nil, errCycle()
		}
		p, err := s.existingDepartment(ctx, "parentId", parent)
		if err != nil {
			return nil, err
		}
		up, err := s.ancestorsOf(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, a := range up {
			if a.ID == did {
				return nil, errCycle()
			}
		}
		base = append(idsOf(up), parent)
	}
	sub, height, err := s.subtree(ctx, d)
	if err != nil {
		return nil, err
	}
	if len(base)+height > MaxDepartmentDepth {
		return nil, errTooDeep("the move would make the tree deeper than " + strconv.Itoa(MaxDepartmentDepth) + " levels")
	}
	if err := s.putLink(ctx, tables.DeptChildKey(parent, did), s.nowMillis()); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, PairStepMoveDepartment); err != nil {
		return nil, err
	}
	rec, err := s.record(ctx, ActionDeptMove, deptNode(did), map[string]any{"parent": deptRef(d.Parent)}, map[string]any{"parent": deptRef(parent)})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: hbase.Values{tables.FamInfo: {tables.ColParent: tables.EncodeID(parent)}}},
		tables.FamInfo, tables.ColParent, tables.EncodeID(d.Parent))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errConcurrent("id", did.String()+" was changed meanwhile; retry")
	}
	rec.committed = true
	if err := s.deleteLink(ctx, tables.DeptChildKey(d.Parent, did)); err != nil {
		return nil, err
	}
	d.Parent = parent
	d.path, d.pathOK = base, true
	return d, s.rewritePaths(ctx, sub, base)
}

// subtree returns d and its descendants in breadth-first order (d first)
// and the subtree's height (1 for a leaf), reading the children of each
// level with verified scans.
func (s *Service) subtree(ctx context.Context, d *Department) ([]*Department, int, error) {
	all := []*Department{d}
	seen := map[weibo.DeptID]bool{d.ID: true}
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
func (s *Service) allChildren(ctx context.Context, did weibo.DeptID) ([]*Department, error) {
	var out []*Department
	var cur *string
	for {
		page, err := s.DepartmentChildren(ctx, did, new(weibo.MaxPageSize), cur)
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
func (s *Service) DeleteDepartment(ctx context.Context, did weibo.DeptID, cascade bool) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete department %s", did)
	d, err := s.existingDepartment(ctx, "id", did)
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
			return false, errNotEmpty(did)
		}
	}
	all := []*Department{d}
	if cascade {
		if all, _, err = s.subtree(ctx, d); err != nil {
			return false, err
		}
	}
	// Recorded as one event; the deletes that follow are committed as they
	// go (a failure part-way leaves a smaller tree, and the event).
	if _, err := s.record(ctx, ActionDeptDelete, deptNode(did), map[string]any{"name": d.Name, "parent": deptRef(d.Parent), "departments": len(all)}, nil); err != nil {
		return false, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if err := s.deleteOne(ctx, all[i]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// deleteOne deletes one department whose sub-departments are gone: its
// managers' cells and their manager rows, its members' cells and member
// rows, then the department.
func (s *Service) deleteOne(ctx context.Context, d *Department) error {
	mgrs, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Departments, Prefix: tables.DeptManagerPrefix(d.ID)})
	if err != nil {
		return err
	}
	// The managers' cells (the authority) first, then their rows: two
	// batched deletes, not two deletes a manager.
	var mgrCells, mgrRows []*hbase.Delete
	for _, r := range mgrs {
		if _, uid, ok := tables.DecodeDeptManagerKey(r.Row); ok {
			mgrCells = append(mgrCells, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid),
				Values: hbase.Values{tables.FamOrg: {tables.ManagerQualifier(d.ID): nil}}})
		}
		mgrRows = append(mgrRows, &hbase.Delete{Table: tables.Departments, Row: r.Row})
	}
	for _, batch := range [][]*hbase.Delete{mgrCells, mgrRows} {
		if len(batch) > 0 {
			if err := s.st.DeleteMany(ctx, batch); err != nil {
				return err
			}
		}
	}
	prefix := tables.DeptMemberPrefix(d.ID)
	var dels []*hbase.Delete
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Departments, Prefix: prefix}, func(r *hbase.Result) error {
		if _, uid, ok := tables.DecodeDeptMemberKey(r.Row); ok {
			if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {tables.ColUserDept: nil}}},
				tables.FamOrg, tables.ColUserDept, tables.EncodeID(d.ID)); err != nil {
				return err
			}
		}
		dels = append(dels, &hbase.Delete{Table: tables.Departments, Row: bytes.Clone(r.Row)})
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
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: tables.DeptKey(d.ID)}); err != nil {
		return err
	}
	if err := s.w.Step(ctx, PairStepDeleteDepartment); err != nil {
		return err
	}
	if err := s.deleteLink(ctx, tables.DeptChildKey(d.Parent, d.ID)); err != nil {
		return err
	}
	// Debris under the department's own prefix (stale child or member rows).
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Departments, Prefix: tables.DeptPrefix(d.ID)})
	if err != nil || len(rows) == 0 {
		return err
	}
	dels = dels[:0]
	for _, r := range rows {
		dels = append(dels, &hbase.Delete{Table: tables.Departments, Row: r.Row})
	}
	return s.st.DeleteMany(ctx, dels)
}

// UserDepartments returns each user's department (nil for none, or when
// the department no longer exists): one GetMany of the users' cells, one of
// the departments.
func (s *Service) UserDepartments(ctx context.Context, uids []weibo.UserID) (_ []*Department, err error) {
	defer weibo.Wrap(&err, "user departments")
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	ids := make([]weibo.DeptID, len(uids))
	var want []weibo.DeptID
	for i, r := range rs {
		if ids[i] = tables.UserDepartment(r); ids[i] != weibo.RootDept {
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
	byID := map[weibo.DeptID]*Department{}
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
func (s *Service) DepartmentChildren(ctx context.Context, did weibo.DeptID, first *int, after *string) (_ *DepartmentConnection, err error) {
	defer weibo.Wrap(&err, "department children")
	q := paging.Query{Kind: paging.CursorDepartments, RowLen: tables.LinkKeyLen,
		Scan: hbase.Scan{Table: tables.Departments, Prefix: tables.DeptChildPrefix(did)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*Department, error) {
			ids := make([]weibo.DeptID, len(rows))
			for i, r := range rows {
				_, ids[i], _ = tables.DecodeDeptChildKey(r.Row) // RootDept when malformed: never a department
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
		}, func(d *Department, cursor string) DepartmentEdge {
			return DepartmentEdge{Department: d, Cursor: cursor}
		})
	if err != nil {
		return nil, err
	}
	return &DepartmentConnection{Edges: edges, PageInfo: info}, nil
}

// TopDepartments pages through the top-level departments (the children of
// RootDept) in id order. Errors as for DepartmentChildren.
func (s *Service) TopDepartments(ctx context.Context, first *int, afterCur *string) (_ *DepartmentConnection, err error) {
	defer weibo.Wrap(&err, "top departments")
	return s.DepartmentChildren(ctx, weibo.RootDept, first, afterCur)
}

// DepartmentMembers pages through the members of did by user id: a prefix
// scan of its member rows and one GetMany of the users' cells per page
// (member rows the user's cell disagrees with are skipped). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) DepartmentMembers(ctx context.Context, did weibo.DeptID, first *int, after *string) (_ *weibo.UserConnection, err error) {
	defer weibo.Wrap(&err, "department members")
	q := paging.Query{Kind: paging.CursorUsers, RowLen: tables.LinkKeyLen,
		Scan: hbase.Scan{Table: tables.Departments, Prefix: tables.DeptMemberPrefix(did)}}
	want := tables.EncodeID(did)
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*weibo.UserID, error) {
			uids := make([]weibo.UserID, len(rows))
			gets := make([]*hbase.Get, len(rows))
			for i, r := range rows {
				_, uids[i], _ = tables.DecodeDeptMemberKey(r.Row) // 0 when malformed: no such user
				gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uids[i]), Families: []string{tables.FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*weibo.UserID, len(rows))
			for i, u := range us {
				if uids[i] != 0 && bytes.Equal(u.Value(tables.FamOrg, tables.ColUserDept), want) {
					out[i] = &uids[i]
				}
			}
			return out, nil
		}, weibo.NewUserEdge)
	if err != nil {
		return nil, err
	}
	return &weibo.UserConnection{Edges: edges, PageInfo: info}, nil
}
