// Package department keeps the department tree of seed 001, case 2
// ("组织架构设计"): a company's departments, their managers, and the reads of
// which users belong to which (package membership changes that). The
// seed's Dep table (cf1: name and up = parent; cf2: one column per
// sub-department) maps to weibo:departments, made tall:
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
package department

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Service keeps the department tree and its managers. It is safe for
// concurrent use.
type Service struct {
	st    hbase.Store
	w     *counted.Protocol
	users org.Users
	audit *org.Recorder
}

// New returns the department tree over st, reading accounts through
// users, recording changes with audit and running w's step hook (and
// clock) between the two writes of each pair. The weibo tables must exist
// (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users org.Users, audit *org.Recorder) *Service {
	return &Service{st: st, w: w, users: users, audit: audit}
}

// Get reads departments by id with one batched GetMany; the result has
// one entry per id, nil where the department does not exist.
func (s *Service) Get(ctx context.Context, ids []weibo.DeptID) (_ []*org.Department, err error) {
	defer weibo.Wrap(&err, "get departments")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Departments, Row: tables.DeptKey(id), Families: []string{tables.FamInfo}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*org.Department, len(ids))
	for i, r := range rs {
		if ids[i] != weibo.RootDept {
			out[i] = org.DepartmentFromRow(ids[i], r)
		}
	}
	return out, nil
}

// Existing reads department did; NOT_FOUND on field when there is none.
func (s *Service) Existing(ctx context.Context, field string, did weibo.DeptID) (*org.Department, error) {
	ds, err := s.Get(ctx, []weibo.DeptID{did})
	if err != nil {
		return nil, err
	}
	if ds[0] == nil {
		return nil, org.ErrDeptNotFound(field, did)
	}
	return ds[0], nil
}

// Ancestors returns d's ancestors, root first, excluding d (ancestorsOf).
func (s *Service) Ancestors(ctx context.Context, d *org.Department) (_ []*org.Department, err error) {
	defer weibo.Wrap(&err, "ancestors")
	return s.ancestorsOf(ctx, d)
}

// walkAncestors returns d's ancestors, root first, excluding d: one Get per
// level, at most org.MaxDepartmentDepth. The walk stops at a missing parent or
// a repeated id (which only a concurrent move race could leave, and Fsck
// reports).
func (s *Service) walkAncestors(ctx context.Context, d *org.Department) ([]*org.Department, error) {
	var up []*org.Department
	seen := map[weibo.DeptID]bool{d.ID: true}
	for id := d.Parent; id != weibo.RootDept && !seen[id] && len(up) < org.MaxDepartmentDepth; {
		seen[id] = true
		ds, err := s.Get(ctx, []weibo.DeptID{id})
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

// Create creates a department under parent (RootDept: top level)
// and returns it. Names are 1 to 64 characters, trimmed; siblings may share
// a name. Errors: BAD_USER_INPUT for a bad name or (reason
// DEPARTMENT_TOO_DEEP) a parent at org.MaxDepartmentDepth, NOT_FOUND for an
// unknown parent.
//
// Writes, in order: a fresh id (Increment of tables.SeqKey), the parent's
// child row (the index), then the department row (the commit point). A
// failure between the two leaves a child row without a department: readers
// skip it and Fsck removes it.
func (s *Service) Create(ctx context.Context, name string, parent weibo.DeptID) (_ *org.Department, err error) {
	defer weibo.Wrap(&err, "create department")
	name, err = org.CleanName("name", name, org.MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	var path []weibo.DeptID // the new department's ancestors
	if parent != weibo.RootDept {
		p, err := s.Existing(ctx, "parentId", parent)
		if err != nil {
			return nil, err
		}
		up, err := s.ancestorsOf(ctx, p)
		if err != nil {
			return nil, err
		}
		if len(up)+1 >= org.MaxDepartmentDepth {
			return nil, errTooDeep("departments may be at most " + strconv.Itoa(org.MaxDepartmentDepth) + " levels deep")
		}
		path = append(org.IDsOf(up), parent)
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Departments, Row: tables.SeqKey, Family: tables.FamInfo, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	did := weibo.DeptID(seq)
	rec, err := s.audit.Record(ctx, org.ActionDeptCreate, org.DeptNode(did), nil, map[string]any{"name": name, "parent": org.DeptRef(parent)}, org.DeptProof(did, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	now := s.w.NowMillis()
	if err := org.PutLink(ctx, s.st, tables.DeptChildKey(parent, did), now); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, org.StepDepartmentCreate); err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: rec.Proven(hbase.Values{tables.FamInfo: {
		tables.ColDeptName: []byte(name), tables.ColParent: tables.EncodeID(parent), tables.ColCreated: tables.EncodeMillis(now),
		tables.ColPath: tables.EncodePath(path), tables.ColDeptMemberCount: tables.EncodeCounter(0),
	}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	return &org.Department{ID: did, Name: name, Parent: parent, CreatedAt: time.UnixMilli(now), Path: path, HasPath: true}, nil
}

// Rename renames a department and returns it (one Put: the name
// lives only in the department row). Errors: BAD_USER_INPUT for a bad name,
// NOT_FOUND for an unknown department.
func (s *Service) Rename(ctx context.Context, did weibo.DeptID, name string) (_ *org.Department, err error) {
	defer weibo.Wrapf(&err, "rename department %s", did)
	name, err = org.CleanName("name", name, org.MaxDepartmentNameLength)
	if err != nil {
		return nil, err
	}
	d, err := s.Existing(ctx, "id", did)
	if err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionDeptRename, org.DeptNode(did), map[string]any{"name": d.Name}, map[string]any{"name": name}, org.DeptProof(did, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: rec.Proven(hbase.Values{tables.FamInfo: {tables.ColDeptName: []byte(name)}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	d.Name = name
	return d, nil
}

// Move moves department did, with its subtree, under parent
// (RootDept: to the top level) and returns it. Errors: NOT_FOUND for an
// unknown department or parent; BAD_USER_INPUT with reason DEPARTMENT_CYCLE
// when parent is did itself or one of its descendants (found by walking up
// from parent), DEPARTMENT_TOO_DEEP when the subtree would end up deeper than
// org.MaxDepartmentDepth, CONCURRENT_UPDATE when the department moved meanwhile.
//
// Writes, in order: the new parent's child row, the department's parent with
// CheckAndPut (expecting the parent it had when read: the commit point),
// then the delete of the old parent's child row. A failure leaves a child
// row that disagrees with the department row: readers skip it and Fsck
// removes it.
func (s *Service) Move(ctx context.Context, did, parent weibo.DeptID) (_ *org.Department, err error) {
	defer weibo.Wrapf(&err, "move department %s under %s", did, parent)
	d, err := s.Existing(ctx, "id", did)
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
		p, err := s.Existing(ctx, "parentId", parent)
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
		base = append(org.IDsOf(up), parent)
	}
	sub, height, err := s.subtree(ctx, d)
	if err != nil {
		return nil, err
	}
	if len(base)+height > org.MaxDepartmentDepth {
		return nil, errTooDeep("the move would make the tree deeper than " + strconv.Itoa(org.MaxDepartmentDepth) + " levels")
	}
	if err := org.PutLink(ctx, s.st, tables.DeptChildKey(parent, did), s.w.NowMillis()); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, org.StepDepartmentMove); err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionDeptMove, org.DeptNode(did), map[string]any{"parent": org.DeptRef(d.Parent)}, map[string]any{"parent": org.DeptRef(parent)}, org.DeptProof(did, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did), Values: rec.Proven(hbase.Values{tables.FamInfo: {tables.ColParent: tables.EncodeID(parent)}})},
		tables.FamInfo, tables.ColParent, tables.EncodeID(d.Parent))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, org.ErrConcurrent("id", did.String()+" was changed meanwhile; retry")
	}
	rec.Commit()
	if err := org.DeleteLink(ctx, s.st, tables.DeptChildKey(d.Parent, did)); err != nil {
		return nil, err
	}
	d.Parent = parent
	d.Path, d.HasPath = base, true
	return d, s.rewritePaths(ctx, sub, base)
}

// subtree returns d and its descendants in breadth-first order (d first)
// and the subtree's height (1 for a leaf), reading the children of each
// level with verified scans.
func (s *Service) subtree(ctx context.Context, d *org.Department) ([]*org.Department, int, error) {
	all := []*org.Department{d}
	seen := map[weibo.DeptID]bool{d.ID: true}
	level, height := []*org.Department{d}, 1
	for len(level) > 0 {
		var next []*org.Department
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
func (s *Service) allChildren(ctx context.Context, did weibo.DeptID) ([]*org.Department, error) {
	var out []*org.Department
	var cur *string
	for {
		page, err := s.Children(ctx, did, new(weibo.MaxPageSize), cur)
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

// Delete deletes a department. Without cascade it refuses one
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
func (s *Service) Delete(ctx context.Context, did weibo.DeptID, cascade bool) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete department %s", did)
	d, err := s.Existing(ctx, "id", did)
	if err != nil {
		return false, err
	}
	one := 1
	if !cascade {
		kids, err := s.Children(ctx, did, &one, nil)
		if err != nil {
			return false, err
		}
		members, err := s.Members(ctx, did, &one, nil)
		if err != nil {
			return false, err
		}
		if len(kids.Edges) > 0 || len(members.Edges) > 0 {
			return false, errNotEmpty(did)
		}
	}
	all := []*org.Department{d}
	if cascade {
		if all, _, err = s.subtree(ctx, d); err != nil {
			return false, err
		}
	}
	// Recorded as one event, whose proof is armed in the department's row:
	// the deletes that follow are committed as they go, deepest first, and
	// the event is visible once the department's own row is gone (a
	// failure part-way leaves a smaller tree, and no event).
	rec, err := s.audit.Record(ctx, org.ActionDeptDelete, org.DeptNode(did), map[string]any{"name": d.Name, "parent": org.DeptRef(d.Parent), "departments": len(all)}, nil,
		org.DeptProof(did, true))
	if err != nil {
		return false, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	for i := len(all) - 1; i >= 0; i-- {
		if err := s.deleteOne(ctx, all[i]); err != nil {
			return false, err
		}
	}
	rec.Commit()
	return true, nil
}

// deleteOne deletes one department whose sub-departments are gone: its
// managers' cells and their manager rows, its members' cells and member
// rows, then the department.
func (s *Service) deleteOne(ctx context.Context, d *org.Department) error {
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
	if err := s.w.Step(ctx, org.StepDepartmentDelete); err != nil {
		return err
	}
	if err := org.DeleteLink(ctx, s.st, tables.DeptChildKey(d.Parent, d.ID)); err != nil {
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

// OfUsers returns each user's department (nil for none, or when
// the department no longer exists): one GetMany of the users' cells, one of
// the departments.
func (s *Service) OfUsers(ctx context.Context, uids []weibo.UserID) (_ []*org.Department, err error) {
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
	out := make([]*org.Department, len(uids))
	if len(want) == 0 {
		return out, nil
	}
	ds, err := s.Get(ctx, want)
	if err != nil {
		return nil, err
	}
	byID := map[weibo.DeptID]*org.Department{}
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

// Children pages through the sub-departments of did (RootDept:
// the top-level departments) in id order: a prefix scan of its child rows
// and one GetMany of the children's rows per page; a child row whose
// department is gone or names another parent is skipped. Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) Children(ctx context.Context, did weibo.DeptID, first *int, after *string) (_ *org.DepartmentConnection, err error) {
	defer weibo.Wrap(&err, "department children")
	q := paging.Query{Kind: paging.CursorDepartments, RowLen: tables.LinkKeyLen,
		Scan: hbase.Scan{Table: tables.Departments, Prefix: tables.DeptChildPrefix(did)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*org.Department, error) {
			ids := make([]weibo.DeptID, len(rows))
			for i, r := range rows {
				_, ids[i], _ = tables.DecodeDeptChildKey(r.Row) // RootDept when malformed: never a department
			}
			ds, err := s.Get(ctx, ids)
			if err != nil {
				return nil, err
			}
			for i, d := range ds {
				if d != nil && d.Parent != did {
					ds[i] = nil
				}
			}
			return ds, nil
		}, func(d *org.Department, cursor string) org.DepartmentEdge {
			return org.DepartmentEdge{Department: d, Cursor: cursor}
		})
	if err != nil {
		return nil, err
	}
	return &org.DepartmentConnection{Edges: edges, PageInfo: info}, nil
}

// Top pages through the top-level departments (the children of
// RootDept) in id order. Errors as for Children.
func (s *Service) Top(ctx context.Context, first *int, afterCur *string) (_ *org.DepartmentConnection, err error) {
	defer weibo.Wrap(&err, "top departments")
	return s.Children(ctx, weibo.RootDept, first, afterCur)
}

// Members pages through the members of did by user id: a prefix
// scan of its member rows and one GetMany of the users' cells per page
// (member rows the user's cell disagrees with are skipped). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) Members(ctx context.Context, did weibo.DeptID, first *int, after *string) (_ *weibo.UserConnection, err error) {
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
