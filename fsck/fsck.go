// Package fsck is `gateway fsck [--repair]`: it checks everything the
// gateway stores on two sides, which HBase cannot write atomically, and
// repairs what disagrees. Each pair has an authority — the side every read
// trusts — and a side that depends on it (docs/modules.md, weibo/counted);
// a repair always makes the dependent side agree with the authority, never
// the reverse. fsck's own checks are the organisation's, the audit log's
// and the social graph's:
//
//	pair                      authority                        dependent
//	user ↔ role               users o:<rid> (and the role row) roles member row, the role's memberCount
//	role ↔ name               roles i:n                        rolenames row
//	parent ↔ child            departments i:up of the child    departments child row
//	department ↔ member       users o:dp                       departments member row
//	follow                    relations attends row A→B        fans row B←A, A's followCount, B's fanCount,
//	                                                           B's posts in A's inbox (backfill window)
//	post                      content row                      the author's postCount, inbox entries
//	user                      usernames row naming the user    the number of users (row 0xff "users")
//
// The interactions' checks are declared by their modules (package check,
// each module's check.go: like, comment, repost, topic, notify) and
// registered with the write protocol (counted.Protocol.RegisterCheck); Run
// starts every registered check, shows each the content row of every
// stored post from its one scan of weibo:content, and runs them after its
// own, in the order registered.
//
// It also reports the writes and fan-outs that never finished (weibo:pending
// and weibo:outbox rows older than the repair grace), which a running
// gateway's repairer finishes by itself.
//
// Run reads the tables with full scans, decoding rowkeys with package
// weibo/tables, and keeps what it compares in memory — except weibo:inbox,
// which it streams owner by owner; it is an operator's tool, not a request
// path. Its repairs go through the domain's modules (Org.Roles.Get,
// Org.Departments.Get, Follows.RepairFollow, Fanout.RepairFanout,
// Writes.RecountCounters and Repair, and each module's own settle) or
// write through the store with conditional writes where a concurrent
// change could race them.
//
// Choices made here: Run takes the *domain.Domain rather than a bare store
// so that "does this role exist" means exactly what it means to the API;
// the in-memory load decodes rows itself (name, counter, parent), since a
// full scan already holds them. Times are the process clock (time.Now),
// compared with the store's cell timestamps for Options.Grace.
package fsck

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Kinds of Issue.
const (
	RoleNameStale       = "role-name-stale"            // a rolenames row whose role is gone or renamed: deleted
	RoleNameMissing     = "role-name-missing"          // a role without its rolenames row: written
	RoleNameConflict    = "role-name-conflict"         // two roles with one name: reported only (rename one)
	RoleMemberStale     = "role-member-stale"          // a member row without the user's cell or role: deleted
	RoleMemberPriority  = "role-member-priority"       // a member row whose priority differs from the user's: rewritten
	RoleMemberMissing   = "role-member-missing"        // a user's role cell without its member row: written
	UserRoleDangling    = "user-role-dangling"         // a user's cell of a role that does not exist: deleted
	RoleCount           = "role-member-count"          // a member counter that differs from the members: recounted
	DeptChildStale      = "department-child-stale"     // a child row the child's parent disagrees with: deleted
	DeptChildMissing    = "department-child-missing"   // a department missing from its parent's child rows: written
	DeptOrphan          = "department-orphan"          // a department whose parent is gone: moved to the top level
	DeptCycle           = "department-cycle"           // a department on a parent cycle: moved to the top level
	DeptMemberStale     = "department-member-stale"    // a member row the user's cell disagrees with: deleted
	DeptMemberMissing   = "department-member-missing"  // a user's department cell without its member row: written
	DeptCount           = "department-member-count"    // a department's member counter that differs from its members: recounted
	DeptManagerStale    = "department-manager-stale"   // a manager row without the user's cell or its department: deleted
	DeptManagerMissing  = "department-manager-missing" // a user's manager cell without its manager row: written
	UserManagerDangling = "user-manager-dangling"      // a user's manager cell of a department that does not exist: deleted
	UserDeptDangling    = "user-department-dangling"   // a user's cell naming a missing department: deleted
	AuditIndexStale     = "audit-index-stale"          // an audit index row whose event row is missing: deleted
	AuditIndexMissing   = "audit-index-missing"        // an audit event row missing an index row (or its copy): written
	AuditPending        = "audit-pending"              // a pending audit event whose change is over: listed if it committed, else deleted
	AuditProofStale     = "audit-proof-stale"          // an audit proof cell in an org row without its pending event: deleted
)

// Area selects what Run checks.
type Area uint

// Areas.
const (
	// AreaOrg is roles and departments: user ↔ role, role ↔ name, parent
	// ↔ child, department ↔ member, member counters, unfinished role writes.
	AreaOrg Area = 1 << iota
	// AreaSocial is follows ↔ fans, the users' counters, the inboxes,
	// likes, reposts and comments and the posts' counters of them, the
	// topics' lists and counters, notifications and the unread counts,
	// and unfinished follows, unfollows, likes, unlikes, reposts,
	// deletes, comment writes, topic writes, notification writes and
	// fan-outs.
	AreaSocial
	// AreaAll is every area.
	AreaAll = AreaOrg | AreaSocial
)

// Options tunes Run.
type Options struct {
	// Repair makes Run fix what it finds; otherwise it only reports.
	Repair bool
	// Grace spares rows younger than this (by cell timestamp): they may be
	// part of a change still in flight. They are reported with Pending set
	// and left alone. 0 checks everything.
	Grace time.Duration
	// Areas selects what is checked; 0 means AreaAll.
	Areas Area
	// RepairGrace is the gateways' repair grace (domain.WithRepairGrace):
	// pending and outbox rows younger than it (or than Grace) belong to
	// writes that may be running and are not issues. 0 means
	// counted.DefaultRepairGrace.
	RepairGrace time.Duration
	// BackfillLimit is the gateways' backfill window (domain.WithBackfillLimit):
	// how many of a followee's newest posts an inbox must hold. 0 means
	// feed.DefaultBackfillLimit.
	BackfillLimit int
}

// Issue is one asymmetry found (package check: the modules' checks
// report the same type).
type Issue = check.Issue

// Report is Run's result.
type Report struct {
	// Rows counts the rows read per table (full names).
	Rows map[string]int
	// Issues are the asymmetries found, in the order checked.
	Issues []Issue
}

// Counts returns the number of issues per kind.
func (r *Report) Counts() map[string]int {
	out := map[string]int{}
	for _, i := range r.Issues {
		out[i.Kind]++
	}
	return out
}

// Unrepaired returns the number of issues left as they were.
func (r *Report) Unrepaired() int {
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
	s      *domain.Domain
	st     hbase.Store
	opt    Options
	p      *check.Pass // the run's store, options, clock, rows read and issues
	now    int64
	roles  map[weibo.RoleID]*org.Role
	names  map[string]fsckLink    // rolenames key -> rid
	rmem   map[[2]uint64]fsckLink // (rid, uid)
	uroles map[[2]uint64][]byte   // (rid, uid) -> priority
	udept  map[weibo.UserID]weibo.DeptID
	depts  map[weibo.DeptID]*org.Department
	kids   map[[2]uint64]fsckLink // (parent, child)
	dmem   map[[2]uint64]fsckLink // (did, uid)
	so     *social                // the social side (social.go)
	runs   []check.Run            // the modules' checks (Protocol.Checks) started on p
	mgr    *managers              // department managers and counters (org.go)
	proofs []auditProof           // audit proof cells in the org's rows (audit.go)

	roleCountTS map[weibo.RoleID]int64 // newest cell of a role row's family c
}

// Run checks the areas opt selects of svc's store (see the package doc)
// and, with opt.Repair, repairs what disagrees. Each repair re-reads the
// rows it touches first and uses conditional writes or the domain's
// settling where a concurrent change could race it, so running it on a
// live system is safe; a change in flight is at worst reported (use Grace
// to spare it). Errors are the store's; a failed repair's error names the
// issue.
func Run(ctx context.Context, svc *domain.Domain, opt Options) (*Report, error) {
	if opt.Areas == 0 {
		opt.Areas = AreaAll
	}
	if opt.RepairGrace == 0 {
		opt.RepairGrace = counted.DefaultRepairGrace
	}
	if opt.BackfillLimit == 0 {
		opt.BackfillLimit = feed.DefaultBackfillLimit
	}
	now := time.Now().UnixMilli()
	f := &fsck{s: svc, st: svc.Store(), opt: opt, now: now,
		roles: map[weibo.RoleID]*org.Role{}, names: map[string]fsckLink{}, rmem: map[[2]uint64]fsckLink{},
		uroles: map[[2]uint64][]byte{}, udept: map[weibo.UserID]weibo.DeptID{}, depts: map[weibo.DeptID]*org.Department{},
		kids: map[[2]uint64]fsckLink{}, dmem: map[[2]uint64]fsckLink{}, roleCountTS: map[weibo.RoleID]int64{}, mgr: newManagers()}
	f.p = check.NewPass(f.st, opt.Repair, opt.Grace, now, func(id weibo.PostID) bool {
		_, ok := f.so.hasPost(id)
		return ok
	})
	// The markers of the organisation's relations belong to AreaOrg, those
	// of every other registered relation to AreaSocial.
	var kinds []tables.PendingKind
	for k := range svc.Writes.Relations() {
		org := k == tables.PendingRole || k == tables.PendingDeptMember
		if (org && opt.Areas&AreaOrg != 0) || (!org && opt.Areas&AreaSocial != 0) {
			kinds = append(kinds, k)
		}
	}
	// Unfinished writes first: their repair settles pairs and recounts.
	if err := f.loadMarkers(ctx); err != nil {
		return nil, err
	}
	if err := f.checkUnfinished(ctx, kinds...); err != nil {
		return nil, err
	}
	if opt.Areas&AreaOrg != 0 {
		if err := f.load(ctx); err != nil {
			return nil, err
		}
		if err := f.checkRoles(ctx); err != nil {
			return nil, err
		}
		if err := f.checkDepartments(ctx); err != nil {
			return nil, err
		}
		if err := f.checkDeptCounters(ctx); err != nil {
			return nil, err
		}
		if err := f.checkManagers(ctx); err != nil {
			return nil, err
		}
		if err := f.checkAudit(ctx); err != nil {
			return nil, err
		}
	}
	if opt.Areas&AreaSocial != 0 {
		for _, c := range svc.Writes.Checks() {
			f.runs = append(f.runs, c.Start(f.p))
		}
		if err := f.loadSocial(ctx); err != nil {
			return nil, err
		}
		if err := f.checkRelations(ctx); err != nil {
			return nil, err
		}
		if err := f.checkInboxes(ctx); err != nil {
			return nil, err
		}
		if err := f.checkCounters(ctx); err != nil {
			return nil, err
		}
		if err := f.checkUserCount(ctx); err != nil {
			return nil, err
		}
		// The modules' checks (package check), in the order registered.
		for _, run := range f.runs {
			if err := run.Check(ctx); err != nil {
				return nil, err
			}
		}
	}
	return &Report{Rows: f.p.Rows(), Issues: f.p.Issues()}, nil
}

func (f *fsck) scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result)) error {
	return f.p.Scan(ctx, sc, fn)
}

func (f *fsck) load(ctx context.Context) error {
	err := f.scan(ctx, &hbase.Scan{Table: tables.Roles}, func(r *hbase.Result) {
		if rid, ok := tables.DecodeRoleKey(r.Row); ok {
			f.noteProofs(tables.Roles, r, tables.FamInfo)
			if name := r.Value(tables.FamInfo, tables.ColRoleName); name != nil {
				f.roles[rid] = &org.Role{ID: rid, Name: string(name),
					MemberCount: tables.CounterValue(r, tables.ColMemberCount)}
				for _, c := range r.Family(tables.FamCount) {
					f.roleCountTS[rid] = max(f.roleCountTS[rid], c.Timestamp)
				}
			}
		} else if rid, uid, ok := tables.DecodeRoleMemberKey(r.Row); ok {
			l := fsckLink{a: uint64(rid), b: uint64(uid), ts: check.NewestTS(r), prio: r.Value(tables.FamInfo, tables.ColPriority)}
			f.rmem[[2]uint64{l.a, l.b}] = l
		}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.RoleNames}, func(r *hbase.Result) {
		f.names[string(r.Row)] = fsckLink{a: uint64(tables.RoleNameRole(r)), ts: check.NewestTS(r)}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.Users, Families: []string{tables.FamOrg}}, func(r *hbase.Result) {
		uid, ok := tables.DecodeUserKey(r.Row)
		if !ok {
			return
		}
		f.noteProofs(tables.Users, r, tables.FamOrg)
		for _, c := range r.Family(tables.FamOrg) {
			if rid, ok := tables.DecodeRoleQualifier(c.Qualifier); ok {
				f.uroles[[2]uint64{uint64(rid), uint64(uid)}] = c.Value
			} else if c.Qualifier == tables.ColUserDept {
				f.udept[uid] = tables.DecodeDeptID(c.Value)
			} else if did, ok := tables.DecodeManagerQualifier(c.Qualifier); ok {
				f.mgr.cells[[2]uint64{uint64(did), uint64(uid)}] = true
			}
		}
	})
	if err != nil {
		return err
	}
	return f.scan(ctx, &hbase.Scan{Table: tables.Departments}, func(r *hbase.Result) {
		if did, ok := tables.DecodeDeptKey(r.Row); ok {
			f.noteProofs(tables.Departments, r, tables.FamInfo)
			if name := r.Value(tables.FamInfo, tables.ColDeptName); name != nil {
				f.depts[did] = &org.Department{ID: did, Name: string(name),
					Parent: tables.DepartmentParent(r), MemberCount: tables.CounterIn(r, tables.FamInfo, tables.ColDeptMemberCount)}
			}
		} else if parent, child, ok := tables.DecodeDeptChildKey(r.Row); ok {
			f.kids[[2]uint64{uint64(parent), uint64(child)}] = fsckLink{a: uint64(parent), b: uint64(child), ts: check.NewestTS(r)}
		} else if did, uid, ok := tables.DecodeDeptMemberKey(r.Row); ok {
			f.dmem[[2]uint64{uint64(did), uint64(uid)}] = fsckLink{a: uint64(did), b: uint64(uid), ts: check.NewestTS(r)}
		} else if did, uid, ok := tables.DecodeDeptManagerKey(r.Row); ok {
			f.mgr.rows[[2]uint64{uint64(did), uint64(uid)}] = fsckLink{a: uint64(did), b: uint64(uid), ts: check.NewestTS(r)}
		}
	})
}

// issue records an issue (check.Pass.Issue); when repairing (and it is
// not pending) it runs fix, which reports whether it changed anything.
func (f *fsck) issue(_ context.Context, kind string, ts int64, fix func() (bool, error), format string, args ...any) error {
	return f.p.Issue(kind, ts, fix, format, args...)
}

// sortedPairs returns the keys of m in order.
func sortedPairs[V any](m map[[2]uint64]V) [][2]uint64 {
	return slices.SortedFunc(maps.Keys(m), func(a, b [2]uint64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
}

func (f *fsck) userRoleCell(ctx context.Context, rid weibo.RoleID, uid weibo.UserID) ([]byte, error) {
	r, err := f.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
	if err != nil {
		return nil, err
	}
	return r.Value(tables.FamOrg, tables.RoleQualifier(rid)), nil
}

func (f *fsck) checkRoles(ctx context.Context) error {
	st := f.st
	// Name index rows.
	for _, k := range slices.Sorted(maps.Keys(f.names)) {
		l := f.names[k]
		role := f.roles[weibo.RoleID(l.a)]
		if role != nil && string(tables.RoleNameKey(role.Name)) == k {
			continue
		}
		key, rid := []byte(k), tables.EncodeID(l.a)
		err := f.issue(ctx, RoleNameStale, l.ts, func() (bool, error) {
			rs, err := f.s.Org.Roles.Get(ctx, []weibo.RoleID{weibo.RoleID(l.a)})
			if err != nil || (rs[0] != nil && bytes.Equal(tables.RoleNameKey(rs[0].Name), key)) {
				return false, err
			}
			return st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: key}, tables.FamName, tables.ColRoleID, rid)
		}, "name %q points at role %d, which is gone or named otherwise", k, l.a)
		if err != nil {
			return err
		}
	}
	// Roles without their name row.
	rids := slices.Sorted(maps.Keys(f.roles))
	for _, rid := range rids {
		role := f.roles[rid]
		key := string(tables.RoleNameKey(role.Name))
		if l, ok := f.names[key]; ok && weibo.RoleID(l.a) == rid {
			continue
		}
		if l, ok := f.names[key]; ok && f.roles[weibo.RoleID(l.a)] != nil && string(tables.RoleNameKey(f.roles[weibo.RoleID(l.a)].Name)) == key {
			if err := f.issue(ctx, RoleNameConflict, 0, nil, "roles %d and %d are both named %q: rename one", rid, l.a, role.Name); err != nil {
				return err
			}
			continue
		}
		err := f.issue(ctx, RoleNameMissing, 0, func() (bool, error) {
			return st.CheckAndPut(ctx, &hbase.Put{Table: tables.RoleNames, Row: []byte(key), Values: hbase.Values{tables.FamName: {tables.ColRoleID: tables.EncodeID(rid)}}},
				tables.FamName, tables.ColRoleID, nil)
		}, "role %d (%q) has no name index row", rid, role.Name)
		if err != nil {
			return err
		}
	}
	// Member rows against the users' cells (the authority) and the roles.
	count := map[weibo.RoleID]int64{}
	for _, k := range sortedPairs(f.rmem) {
		l := f.rmem[k]
		rid, uid := weibo.RoleID(k[0]), weibo.UserID(k[1])
		cell, held := f.uroles[k]
		switch {
		case held && f.roles[rid] != nil && bytes.Equal(cell, l.prio):
			count[rid]++
		case held && f.roles[rid] != nil:
			count[rid]++
			err := f.issue(ctx, RoleMemberPriority, 0, func() (bool, error) {
				cur, err := f.userRoleCell(ctx, rid, uid)
				if err != nil || cur == nil {
					return false, err
				}
				return true, st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid), Values: hbase.Values{tables.FamInfo: {tables.ColPriority: cur}}})
			}, "member row of user %d in role %d has priority %v, the user's cell %v", uid, rid, l.prio, cell)
			if err != nil {
				return err
			}
		default:
			err := f.issue(ctx, RoleMemberStale, l.ts, func() (bool, error) {
				if f.roles[rid] != nil {
					cur, err := f.userRoleCell(ctx, rid, uid)
					if err != nil || cur != nil {
						return false, err // assigned meanwhile
					}
				}
				return true, st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid)})
			}, "member row of user %d in role %d without the user's cell or the role", uid, rid)
			if err != nil {
				return err
			}
		}
	}
	// Users' cells against the roles and the member rows.
	for _, k := range sortedPairs(f.uroles) {
		rid, uid := weibo.RoleID(k[0]), weibo.UserID(k[1])
		cell := f.uroles[k]
		if f.roles[rid] == nil {
			err := f.issue(ctx, UserRoleDangling, 0, func() (bool, error) {
				rs, err := f.s.Org.Roles.Get(ctx, []weibo.RoleID{rid})
				if err != nil || rs[0] != nil {
					return false, err
				}
				if err := st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {tables.RoleQualifier(rid): nil}}}); err != nil {
					return false, err
				}
				return true, st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid)})
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
		err := f.issue(ctx, RoleMemberMissing, 0, func() (bool, error) {
			cur, err := f.userRoleCell(ctx, rid, uid)
			if err != nil || cur == nil {
				return false, err
			}
			return true, st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid), Values: hbase.Values{tables.FamInfo: {tables.ColPriority: cur}}})
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
		err := f.issue(ctx, RoleCount, f.roleCountTS[rid], func() (bool, error) {
			res, err := f.s.Writes.RecountCounters(ctx, []counted.Counter{{Kind: org.MemberCount, Owner: uint64(rid)}})
			return err == nil && res[0].Done, err
		}, "role %d (%q) counts %d members, has %d", rid, role.Name, role.MemberCount, count[rid])
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *fsck) checkDepartments(ctx context.Context) error {
	st := f.st
	ids := slices.Sorted(maps.Keys(f.depts))
	// The parent each department will have: its own, or the top level for
	// orphans and for one department of every parent cycle.
	eff := map[weibo.DeptID]weibo.DeptID{}
	for _, id := range ids {
		eff[id] = f.depts[id].Parent
	}
	state := map[weibo.DeptID]int{} // 0 unseen, 1 on the current path, 2 done
	for _, start := range ids {
		var path []weibo.DeptID
		id := start
		for id != weibo.RootDept && state[id] == 0 {
			state[id] = 1
			path = append(path, id)
			p := eff[id]
			if p != weibo.RootDept && f.depts[p] == nil {
				d := f.depts[id]
				if err := f.issue(ctx, DeptOrphan, 0, f.moveTop(ctx, d), "department %d (%q) names parent %d, which does not exist", id, d.Name, p); err != nil {
					return err
				}
				eff[id] = weibo.RootDept
				break
			}
			if p != weibo.RootDept && state[p] == 1 {
				d := f.depts[id]
				if err := f.issue(ctx, DeptCycle, 0, f.moveTop(ctx, d), "department %d (%q) is on a parent cycle through %d", id, d.Name, p); err != nil {
					return err
				}
				eff[id] = weibo.RootDept
				break
			}
			id = p
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	// Child rows against the children's parents.
	for _, k := range sortedPairs(f.kids) {
		l := f.kids[k]
		parent, child := weibo.DeptID(k[0]), weibo.DeptID(k[1])
		if d := f.depts[child]; d != nil && eff[child] == parent {
			continue
		}
		err := f.issue(ctx, DeptChildStale, l.ts, func() (bool, error) {
			ds, err := f.s.Org.Departments.Get(ctx, []weibo.DeptID{child})
			if err != nil || (ds[0] != nil && ds[0].Parent == parent) {
				return false, err
			}
			return true, st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: tables.DeptChildKey(parent, child)})
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
		err := f.issue(ctx, DeptChildMissing, 0, func() (bool, error) {
			return true, st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptChildKey(p, id), Values: tables.LinkValues(f.now)})
		}, "department %d (%q) is missing from its parent %d's child rows", id, f.depts[id].Name, p)
		if err != nil {
			return err
		}
	}
	// Member rows against the users' cells.
	for _, k := range sortedPairs(f.dmem) {
		l := f.dmem[k]
		did, uid := weibo.DeptID(k[0]), weibo.UserID(k[1])
		if f.udept[uid] == did && f.depts[did] != nil {
			continue
		}
		err := f.issue(ctx, DeptMemberStale, l.ts, func() (bool, error) {
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
			if err != nil || (tables.UserDepartment(r) == did && f.depts[did] != nil) {
				return false, err
			}
			return true, st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: tables.DeptMemberKey(did, uid)})
		}, "member row of user %d in department %d disagrees with the user's department", uid, did)
		if err != nil {
			return err
		}
	}
	for _, uid := range slices.Sorted(maps.Keys(f.udept)) {
		did := f.udept[uid]
		if f.depts[did] == nil {
			err := f.issue(ctx, UserDeptDangling, 0, func() (bool, error) {
				return st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {tables.ColUserDept: nil}}},
					tables.FamOrg, tables.ColUserDept, tables.EncodeID(did))
			}, "user %d is in department %d, which does not exist", uid, did)
			if err != nil {
				return err
			}
			continue
		}
		if _, ok := f.dmem[[2]uint64{uint64(did), uint64(uid)}]; ok {
			continue
		}
		err := f.issue(ctx, DeptMemberMissing, 0, func() (bool, error) {
			return true, st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptMemberKey(did, uid), Values: tables.LinkValues(f.now)})
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
func (f *fsck) moveTop(ctx context.Context, d *org.Department) func() (bool, error) {
	return func() (bool, error) {
		st := f.st
		if err := st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptChildKey(weibo.RootDept, d.ID), Values: tables.LinkValues(f.now)}); err != nil {
			return false, err
		}
		ok, err := st.CheckAndPut(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(d.ID), Values: hbase.Values{tables.FamInfo: {tables.ColParent: tables.EncodeID(weibo.RootDept)}}},
			tables.FamInfo, tables.ColParent, tables.EncodeID(d.Parent))
		if err != nil || !ok {
			return false, err
		}
		return true, st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: tables.DeptChildKey(d.Parent, d.ID)})
	}
}
