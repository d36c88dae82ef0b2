package weibo

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Fsck (`gateway fsck [--repair]`) checks the two-sided pairs of roles and
// departments, which HBase cannot write atomically, and repairs the
// asymmetric ones. Each pair has an authoritative side — the one every
// read trusts — and an index side; a repair always makes the index agree
// with the authority, never the reverse:
//
//	pair                      authoritative                   index
//	user ↔ role               users o:<rid> (and the role row) roles member row
//	role ↔ name               roles i:n                       rolenames row
//	parent ↔ child            departments i:up of the child   departments child row
//	department ↔ member       users o:dp                      departments member row
//
// Fsck reads the four tables with full scans (family o only for
// weibo:users) and keeps the role and department rows in memory; it is an
// operator's tool, not a request path.

// Kinds of FsckIssue.
const (
	FsckRoleNameStale      = "role-name-stale"           // a rolenames row whose role is gone or renamed: deleted
	FsckRoleNameMissing    = "role-name-missing"         // a role without its rolenames row: written
	FsckRoleNameConflict   = "role-name-conflict"        // two roles with one name: reported only (rename one)
	FsckRoleMemberStale    = "role-member-stale"         // a member row without the user's cell or role: deleted
	FsckRoleMemberPriority = "role-member-priority"      // a member row whose priority differs from the user's: rewritten
	FsckRoleMemberMissing  = "role-member-missing"       // a user's role cell without its member row: written
	FsckUserRoleDangling   = "user-role-dangling"        // a user's cell of a role that does not exist: deleted
	FsckRoleCount          = "role-member-count"         // a member counter that differs from the members: corrected
	FsckDeptChildStale     = "department-child-stale"    // a child row the child's parent disagrees with: deleted
	FsckDeptChildMissing   = "department-child-missing"  // a department missing from its parent's child rows: written
	FsckDeptOrphan         = "department-orphan"         // a department whose parent is gone: moved to the top level
	FsckDeptCycle          = "department-cycle"          // a department on a parent cycle: moved to the top level
	FsckDeptMemberStale    = "department-member-stale"   // a member row the user's cell disagrees with: deleted
	FsckDeptMemberMissing  = "department-member-missing" // a user's department cell without its member row: written
	FsckUserDeptDangling   = "user-department-dangling"  // a user's cell naming a missing department: deleted
)

// FsckOptions tunes Fsck.
type FsckOptions struct {
	// Repair makes Fsck fix what it finds; otherwise it only reports.
	Repair bool
	// Grace spares index rows younger than this (by cell timestamp): they
	// may be the first half of a change still in flight. They are reported
	// with Pending set and left alone. 0 checks everything.
	Grace time.Duration
}

// FsckIssue is one asymmetry found.
type FsckIssue struct {
	// Kind is one of the Fsck* constants.
	Kind string
	// Detail says which rows, in words.
	Detail string
	// Repaired tells whether Fsck fixed it.
	Repaired bool
	// Pending tells that the issue is younger than the grace period and was left alone.
	Pending bool
}

// FsckReport is Fsck's result.
type FsckReport struct {
	// Rows counts the rows read per table (full names).
	Rows map[string]int
	// Issues are the asymmetries found, in the order checked.
	Issues []FsckIssue
}

// Unrepaired returns the number of issues left as they were.
func (r *FsckReport) Unrepaired() int {
	n := 0
	for _, i := range r.Issues {
		if !i.Repaired {
			n++
		}
	}
	return n
}

type fsckLink struct {
	a, b uint64 // owner id, target id
	ts   int64
	prio []byte // role member rows
}

type fsck struct {
	s      *Service
	opt    FsckOptions
	rep    *FsckReport
	now    int64
	roles  map[RoleID]*Role
	names  map[string]fsckLink // rolenames key -> rid
	rmem   map[[2]uint64]fsckLink
	uroles map[[2]uint64][]byte // (rid, uid) -> priority
	udept  map[UserID]DeptID
	depts  map[DeptID]*Department
	kids   map[[2]uint64]fsckLink // (parent, child)
	dmem   map[[2]uint64]fsckLink // (did, uid)
}

// Fsck checks every role and department pair and, with opt.Repair,
// repairs the asymmetric ones (see the table at the top of fsck.go). Each
// repair re-reads the rows it touches first and uses conditional writes
// where a concurrent change could race it, so running it on a live system
// is safe; a change in flight is at worst reported (use Grace to spare it).
func (s *Service) Fsck(ctx context.Context, opt FsckOptions) (*FsckReport, error) {
	f := &fsck{s: s, opt: opt, rep: &FsckReport{Rows: map[string]int{}}, now: s.nowMillis(),
		roles: map[RoleID]*Role{}, names: map[string]fsckLink{}, rmem: map[[2]uint64]fsckLink{},
		uroles: map[[2]uint64][]byte{}, udept: map[UserID]DeptID{}, depts: map[DeptID]*Department{},
		kids: map[[2]uint64]fsckLink{}, dmem: map[[2]uint64]fsckLink{}}
	if err := f.load(ctx); err != nil {
		return nil, err
	}
	if err := f.checkRoles(ctx); err != nil {
		return nil, err
	}
	if err := f.checkDepartments(ctx); err != nil {
		return nil, err
	}
	return f.rep, nil
}

func newestTS(r *hbase.Result) int64 {
	var ts int64
	for _, c := range r.Cells {
		ts = max(ts, c.Timestamp)
	}
	return ts
}

func (f *fsck) scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result)) error {
	return f.s.st.Scan(ctx, sc, func(r *hbase.Result) error {
		f.rep.Rows[sc.Table]++
		fn(r)
		return nil
	})
}

func (f *fsck) load(ctx context.Context) error {
	err := f.scan(ctx, &hbase.Scan{Table: TableRoles}, func(r *hbase.Result) {
		switch {
		case len(r.Row) == 9:
			rid := RoleID(binary.BigEndian.Uint64(r.Row[1:]))
			if role := roleFromRow(rid, r); role != nil {
				f.roles[rid] = role
			}
		case len(r.Row) == 18 && r.Row[9] == linkMember:
			l := fsckLink{a: binary.BigEndian.Uint64(r.Row[1:9]), b: binary.BigEndian.Uint64(r.Row[10:]), ts: newestTS(r), prio: r.Value(FamInfo, ColPriority)}
			f.rmem[[2]uint64{l.a, l.b}] = l
		}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: TableRoleNames}, func(r *hbase.Result) {
		f.names[string(r.Row)] = fsckLink{a: DecodeU64(r.Value(FamName, ColRoleID)), ts: newestTS(r)}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: TableUsers, Families: []string{FamOrg}}, func(r *hbase.Result) {
		if len(r.Row) != 9 {
			return
		}
		uid := UserID(binary.BigEndian.Uint64(r.Row[1:]))
		for _, c := range r.Family(FamOrg) {
			switch {
			case len(c.Qualifier) == 8:
				f.uroles[[2]uint64{binary.BigEndian.Uint64([]byte(c.Qualifier)), uint64(uid)}] = c.Value
			case c.Qualifier == ColUserDept:
				f.udept[uid] = DeptID(DecodeU64(c.Value))
			}
		}
	})
	if err != nil {
		return err
	}
	return f.scan(ctx, &hbase.Scan{Table: TableDepartments}, func(r *hbase.Result) {
		switch {
		case len(r.Row) == 9:
			did := DeptID(binary.BigEndian.Uint64(r.Row[1:]))
			if d := deptFromRow(did, r); d != nil {
				f.depts[did] = d
			}
		case len(r.Row) == 18 && r.Row[9] == linkChild:
			l := fsckLink{a: binary.BigEndian.Uint64(r.Row[1:9]), b: binary.BigEndian.Uint64(r.Row[10:]), ts: newestTS(r)}
			f.kids[[2]uint64{l.a, l.b}] = l
		case len(r.Row) == 18 && r.Row[9] == linkMember:
			l := fsckLink{a: binary.BigEndian.Uint64(r.Row[1:9]), b: binary.BigEndian.Uint64(r.Row[10:]), ts: newestTS(r)}
			f.dmem[[2]uint64{l.a, l.b}] = l
		}
	})
}

// issue records an issue; when repairing (and it is not pending) it runs
// fix, which reports whether it changed anything.
func (f *fsck) issue(ctx context.Context, kind string, ts int64, fix func() (bool, error), format string, args ...any) error {
	is := FsckIssue{Kind: kind, Detail: fmt.Sprintf(format, args...)}
	if ts != 0 && f.opt.Grace > 0 && f.now-ts < f.opt.Grace.Milliseconds() {
		is.Pending = true
	} else if f.opt.Repair && fix != nil {
		ok, err := fix()
		if err != nil {
			return fmt.Errorf("fsck: repair %s (%s): %w", kind, is.Detail, err)
		}
		is.Repaired = ok
	}
	f.rep.Issues = append(f.rep.Issues, is)
	return nil
}

func sortedKeys[K interface{ ~[2]uint64 }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	return keys
}

func (f *fsck) userRoleCell(ctx context.Context, rid RoleID, uid UserID) ([]byte, error) {
	r, err := f.s.st.Get(ctx, &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}})
	if err != nil {
		return nil, err
	}
	return r.Value(FamOrg, RoleQualifier(rid)), nil
}

func (f *fsck) checkRoles(ctx context.Context) error {
	st := f.s.st
	// Name index rows.
	nameKeys := make([]string, 0, len(f.names))
	for k := range f.names {
		nameKeys = append(nameKeys, k)
	}
	sort.Strings(nameKeys)
	for _, k := range nameKeys {
		l := f.names[k]
		role := f.roles[RoleID(l.a)]
		if role != nil && string(RoleNameKey(role.Name)) == k {
			continue
		}
		key, rid := []byte(k), U64(l.a)
		err := f.issue(ctx, FsckRoleNameStale, l.ts, func() (bool, error) {
			rs, err := f.s.GetRoles(ctx, []RoleID{RoleID(l.a)})
			if err != nil || (rs[0] != nil && bytes.Equal(RoleNameKey(rs[0].Name), key)) {
				return false, err
			}
			return st.CheckAndDelete(ctx, &hbase.Delete{Table: TableRoleNames, Row: key}, FamName, ColRoleID, rid)
		}, "name %q points at role %d, which is gone or named otherwise", k, l.a)
		if err != nil {
			return err
		}
	}
	// Roles without their name row.
	rids := make([]RoleID, 0, len(f.roles))
	for rid := range f.roles {
		rids = append(rids, rid)
	}
	sort.Slice(rids, func(i, j int) bool { return rids[i] < rids[j] })
	for _, rid := range rids {
		role := f.roles[rid]
		key := string(RoleNameKey(role.Name))
		if l, ok := f.names[key]; ok && RoleID(l.a) == rid {
			continue
		}
		if l, ok := f.names[key]; ok && f.roles[RoleID(l.a)] != nil && string(RoleNameKey(f.roles[RoleID(l.a)].Name)) == key {
			if err := f.issue(ctx, FsckRoleNameConflict, 0, nil, "roles %d and %d are both named %q: rename one", rid, l.a, role.Name); err != nil {
				return err
			}
			continue
		}
		err := f.issue(ctx, FsckRoleNameMissing, 0, func() (bool, error) {
			return st.CheckAndPut(ctx, &hbase.Put{Table: TableRoleNames, Row: []byte(key), Values: hbase.Values{FamName: {ColRoleID: U64(uint64(rid))}}},
				FamName, ColRoleID, nil)
		}, "role %d (%q) has no name index row", rid, role.Name)
		if err != nil {
			return err
		}
	}
	// Member rows against the users' cells (authoritative) and the roles.
	count := map[RoleID]int64{}
	for _, k := range sortedKeys(f.rmem) {
		l := f.rmem[k]
		rid, uid := RoleID(k[0]), UserID(k[1])
		cell, held := f.uroles[k]
		switch {
		case held && f.roles[rid] != nil && bytes.Equal(cell, l.prio):
			count[rid]++
		case held && f.roles[rid] != nil:
			count[rid]++
			err := f.issue(ctx, FsckRoleMemberPriority, 0, func() (bool, error) {
				cur, err := f.userRoleCell(ctx, rid, uid)
				if err != nil || cur == nil {
					return false, err
				}
				return true, st.Put(ctx, &hbase.Put{Table: TableRoles, Row: RoleMemberKey(rid, uid), Values: hbase.Values{FamInfo: {ColPriority: cur}}})
			}, "member row of user %d in role %d has priority %v, the user's cell %v", uid, rid, l.prio, cell)
			if err != nil {
				return err
			}
		default:
			err := f.issue(ctx, FsckRoleMemberStale, l.ts, func() (bool, error) {
				if f.roles[rid] != nil {
					cur, err := f.userRoleCell(ctx, rid, uid)
					if err != nil || cur != nil {
						return false, err // assigned meanwhile
					}
				}
				return true, st.Delete(ctx, &hbase.Delete{Table: TableRoles, Row: RoleMemberKey(rid, uid)})
			}, "member row of user %d in role %d without the user's cell or the role", uid, rid)
			if err != nil {
				return err
			}
		}
	}
	// Users' cells against the roles and the member rows.
	for _, k := range sortedKeys(f.uroles) {
		rid, uid := RoleID(k[0]), UserID(k[1])
		cell := f.uroles[k]
		if f.roles[rid] == nil {
			err := f.issue(ctx, FsckUserRoleDangling, 0, func() (bool, error) {
				rs, err := f.s.GetRoles(ctx, []RoleID{rid})
				if err != nil || rs[0] != nil {
					return false, err
				}
				if err := st.Delete(ctx, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {RoleQualifier(rid): nil}}}); err != nil {
					return false, err
				}
				return true, st.Delete(ctx, &hbase.Delete{Table: TableRoles, Row: RoleMemberKey(rid, uid)})
			}, "user %d holds role %d, which does not exist", uid, rid)
			if err != nil {
				return err
			}
			continue
		}
		if _, ok := f.rmem[k]; ok {
			continue
		}
		count[rid]++
		err := f.issue(ctx, FsckRoleMemberMissing, 0, func() (bool, error) {
			cur, err := f.userRoleCell(ctx, rid, uid)
			if err != nil || cur == nil {
				return false, err
			}
			return true, st.Put(ctx, &hbase.Put{Table: TableRoles, Row: RoleMemberKey(rid, uid), Values: hbase.Values{FamInfo: {ColPriority: cur}}})
		}, "user %d holds role %d (priority %v) but the role has no member row for it", uid, rid, cell)
		if err != nil {
			return err
		}
	}
	// Member counters.
	for _, rid := range rids {
		role := f.roles[rid]
		if role.MemberCount == count[rid] {
			continue
		}
		delta := count[rid] - role.MemberCount
		err := f.issue(ctx, FsckRoleCount, 0, func() (bool, error) {
			_, err := st.Increment(ctx, &hbase.Increment{Table: TableRoles, Row: RoleKey(rid), Family: FamCount, Qualifier: ColMemberCount, Amount: delta})
			return err == nil, err
		}, "role %d (%q) counts %d members, has %d", rid, role.Name, role.MemberCount, count[rid])
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *fsck) checkDepartments(ctx context.Context) error {
	st := f.s.st
	ids := make([]DeptID, 0, len(f.depts))
	for id := range f.depts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	// The parent each department will have: its own, or the top level for
	// orphans and for one department of every parent cycle.
	eff := map[DeptID]DeptID{}
	for _, id := range ids {
		eff[id] = f.depts[id].Parent
	}
	state := map[DeptID]int{} // 0 unseen, 1 on the current path, 2 done
	for _, start := range ids {
		var path []DeptID
		id := start
		for id != RootDept && state[id] == 0 {
			state[id] = 1
			path = append(path, id)
			p := eff[id]
			if p != RootDept && f.depts[p] == nil {
				d := f.depts[id]
				if err := f.issue(ctx, FsckDeptOrphan, 0, f.moveTop(ctx, d), "department %d (%q) names parent %d, which does not exist", id, d.Name, p); err != nil {
					return err
				}
				eff[id] = RootDept
				break
			}
			if p != RootDept && state[p] == 1 {
				d := f.depts[id]
				if err := f.issue(ctx, FsckDeptCycle, 0, f.moveTop(ctx, d), "department %d (%q) is on a parent cycle through %d", id, d.Name, p); err != nil {
					return err
				}
				eff[id] = RootDept
				break
			}
			id = p
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	// Child rows against the children's parents.
	for _, k := range sortedKeys(f.kids) {
		l := f.kids[k]
		parent, child := DeptID(k[0]), DeptID(k[1])
		if d := f.depts[child]; d != nil && eff[child] == parent {
			continue
		}
		err := f.issue(ctx, FsckDeptChildStale, l.ts, func() (bool, error) {
			ds, err := f.s.GetDepartments(ctx, []DeptID{child})
			if err != nil || (ds[0] != nil && ds[0].Parent == parent) {
				return false, err
			}
			return true, st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptChildKey(parent, child)})
		}, "child row %d under %d disagrees with department %d's parent", child, parent, child)
		if err != nil {
			return err
		}
	}
	for _, id := range ids {
		p := eff[id]
		if _, ok := f.kids[[2]uint64{uint64(p), uint64(id)}]; ok {
			continue
		}
		if p != f.depts[id].Parent {
			continue // moveTop wrote it
		}
		err := f.issue(ctx, FsckDeptChildMissing, 0, func() (bool, error) {
			return true, st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptChildKey(p, id), Values: linkValue(f.now)})
		}, "department %d (%q) is missing from its parent %d's child rows", id, f.depts[id].Name, p)
		if err != nil {
			return err
		}
	}
	// Member rows against the users' cells.
	for _, k := range sortedKeys(f.dmem) {
		l := f.dmem[k]
		did, uid := DeptID(k[0]), UserID(k[1])
		if f.udept[uid] == did && f.depts[did] != nil {
			continue
		}
		err := f.issue(ctx, FsckDeptMemberStale, l.ts, func() (bool, error) {
			r, err := st.Get(ctx, &hbase.Get{Table: TableUsers, Row: UserKey(uid), Families: []string{FamOrg}})
			if err != nil || (DeptID(DecodeU64(r.Value(FamOrg, ColUserDept))) == did && f.depts[did] != nil) {
				return false, err
			}
			return true, st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptMemberKey(did, uid)})
		}, "member row of user %d in department %d disagrees with the user's department", uid, did)
		if err != nil {
			return err
		}
	}
	uids := make([]UserID, 0, len(f.udept))
	for uid := range f.udept {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	for _, uid := range uids {
		did := f.udept[uid]
		if f.depts[did] == nil {
			err := f.issue(ctx, FsckUserDeptDangling, 0, func() (bool, error) {
				return st.CheckAndDelete(ctx, &hbase.Delete{Table: TableUsers, Row: UserKey(uid), Values: hbase.Values{FamOrg: {ColUserDept: nil}}},
					FamOrg, ColUserDept, U64(uint64(did)))
			}, "user %d is in department %d, which does not exist", uid, did)
			if err != nil {
				return err
			}
			continue
		}
		if _, ok := f.dmem[[2]uint64{uint64(did), uint64(uid)}]; ok {
			continue
		}
		err := f.issue(ctx, FsckDeptMemberMissing, 0, func() (bool, error) {
			return true, st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptMemberKey(did, uid), Values: linkValue(f.now)})
		}, "user %d is in department %d, which has no member row for it", uid, did)
		if err != nil {
			return err
		}
	}
	return nil
}

// moveTop returns the repair that makes d a top-level department: the
// root's child row, the parent (CheckAndPut expecting the old one), and the
// delete of the old parent's child row.
func (f *fsck) moveTop(ctx context.Context, d *Department) func() (bool, error) {
	return func() (bool, error) {
		st := f.s.st
		if err := st.Put(ctx, &hbase.Put{Table: TableDepartments, Row: DeptChildKey(RootDept, d.ID), Values: linkValue(f.now)}); err != nil {
			return false, err
		}
		ok, err := st.CheckAndPut(ctx, &hbase.Put{Table: TableDepartments, Row: DeptKey(d.ID), Values: hbase.Values{FamInfo: {ColParent: U64(0)}}},
			FamInfo, ColParent, U64(uint64(d.Parent)))
		if err != nil || !ok {
			return false, err
		}
		return true, st.Delete(ctx, &hbase.Delete{Table: TableDepartments, Row: DeptChildKey(d.Parent, d.ID)})
	}
}
