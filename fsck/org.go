package fsck

import (
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// managers is what the org load keeps of department managers: both sides
// of each (department, user) pair.
type managers struct {
	rows  map[[2]uint64]fsckLink // (did, uid): manager rows, the dependent
	cells map[[2]uint64]bool     // (did, uid): users' cells, the authority
}

func newManagers() *managers {
	return &managers{rows: map[[2]uint64]fsckLink{}, cells: map[[2]uint64]bool{}}
}

// checkDeptCounters compares each department's member counter with its
// members (users whose cell names it) and recounts those that differ.
func (f *fsck) checkDeptCounters(ctx context.Context) error {
	count := map[weibo.DeptID]int64{}
	for _, did := range f.udept {
		count[did]++
	}
	for _, did := range slices.Sorted(maps.Keys(f.depts)) {
		d := f.depts[did]
		if d.MemberCount == count[did] {
			continue
		}
		err := f.issue(ctx, DeptCount, 0, func() (bool, error) {
			res, err := f.s.Writes.RecountCounters(ctx, []counted.Counter{{Kind: org.DeptMemberCount, Owner: uint64(did)}})
			return err == nil && res[0].Done && res[0].Before != res[0].After, err
		}, "department %d (%q) counts %d members, has %d", did, d.Name, d.MemberCount, count[did])
		if err != nil {
			return err
		}
	}
	return nil
}

// checkManagers compares the manager rows with the users' cells, the
// authority, and the cells with the departments.
func (f *fsck) checkManagers(ctx context.Context) error {
	st := f.st
	for _, k := range sortedPairs(f.mgr.rows) {
		l := f.mgr.rows[k]
		did, uid := weibo.DeptID(k[0]), weibo.UserID(k[1])
		if f.mgr.cells[k] && f.depts[did] != nil {
			continue
		}
		err := f.issue(ctx, DeptManagerStale, l.ts, func() (bool, error) {
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
			if err != nil || (r.Value(tables.FamOrg, tables.ManagerQualifier(did)) != nil && f.depts[did] != nil) {
				return false, err
			}
			return true, st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: tables.DeptManagerKey(did, uid)})
		}, "manager row of user %d in department %d without the user's cell or the department", uid, did)
		if err != nil {
			return err
		}
	}
	for _, k := range sortedPairs(f.mgr.cells) {
		did, uid := weibo.DeptID(k[0]), weibo.UserID(k[1])
		if f.depts[did] == nil {
			err := f.issue(ctx, UserManagerDangling, 0, func() (bool, error) {
				return true, st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid),
					Values: hbase.Values{tables.FamOrg: {tables.ManagerQualifier(did): nil}}})
			}, "user %d manages department %d, which does not exist", uid, did)
			if err != nil {
				return err
			}
			continue
		}
		if _, ok := f.mgr.rows[k]; ok {
			continue
		}
		err := f.issue(ctx, DeptManagerMissing, 0, func() (bool, error) {
			return true, st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptManagerKey(did, uid), Values: tables.LinkValues(f.now)})
		}, "user %d manages department %d, which has no manager row for it", uid, did)
		if err != nil {
			return err
		}
	}
	return nil
}
