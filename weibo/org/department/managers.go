package department

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Department managers. A user may manage departments, each with its whole
// subtree (an org unit's own administrators, as directory services have
// them): a manager may create, rename, move and delete departments and set
// memberships inside the subtree, and nothing else (package authz). The
// pair is stored on both sides (org/pairs.go): the authority is the user's
// cell ManagerQualifier(did) in family o of weibo:users (read with the
// user's roles and department in one Get), the dependent a manager row
// under the department (listing its managers by user id).

// AddManager makes user uid a manager of department did and
// returns the department; making a manager again changes nothing. Errors:
// NOT_FOUND for an unknown user or department.
//
// Writes, in order: the manager row (the dependent), then the user's cell
// (the authority, the commit point). A failure between leaves a manager row
// without the cell: reads skip it, repeating the call finishes it, and
// fsck removes it.
func (s *Service) AddManager(ctx context.Context, did weibo.DeptID, uid weibo.UserID) (_ *org.Department, err error) {
	defer weibo.Wrapf(&err, "add manager %s of department %s", uid, did)
	d, err := s.Existing(ctx, "departmentId", did)
	if err != nil {
		return nil, err
	}
	if _, err := org.ExistingUser(ctx, s.users, uid); err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	if err := org.PutLink(ctx, s.st, tables.DeptManagerKey(did, uid), now); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, org.StepDepartmentAddManager); err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionDeptAddManager, org.DeptNode(did), nil, map[string]any{"manager": uid.String()}, org.UserProof(uid, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid),
		Values: rec.Proven(hbase.Values{tables.FamOrg: {tables.ManagerQualifier(did): tables.EncodeMillis(now)}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	return d, nil
}

// RemoveManager takes department did from manager uid and
// returns the department; removing a user who is no manager changes
// nothing. Errors: NOT_FOUND for an unknown user or department.
//
// Writes, in order: the delete of the user's cell (the authority, the
// commit point), then of the manager row.
func (s *Service) RemoveManager(ctx context.Context, did weibo.DeptID, uid weibo.UserID) (_ *org.Department, err error) {
	defer weibo.Wrapf(&err, "remove manager %s of department %s", uid, did)
	d, err := s.Existing(ctx, "departmentId", did)
	if err != nil {
		return nil, err
	}
	if _, err := org.ExistingUser(ctx, s.users, uid); err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionDeptRemoveManager, org.DeptNode(did), map[string]any{"manager": uid.String()}, nil, org.UserProof(uid, true))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid),
		Values: rec.Proven(hbase.Values{tables.FamOrg: {tables.ManagerQualifier(did): nil}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	if err := s.w.Step(ctx, org.StepDepartmentRemoveManager); err != nil {
		return nil, err
	}
	return d, org.DeleteLink(ctx, s.st, tables.DeptManagerKey(did, uid))
}

// Managers returns the managers of department did, by user id: a prefix
// scan of its manager rows and one GetMany of the users' cells, which are
// the authority (rows without the cell are skipped). At most MaxPageSize
// rounds of weibo.MaxPageSize rows are read: a department has few managers.
func (s *Service) Managers(ctx context.Context, did weibo.DeptID) (_ []weibo.UserID, err error) {
	defer weibo.Wrap(&err, "department managers")
	qual := tables.ManagerQualifier(did)
	sc := &hbase.Scan{Table: tables.Departments, Prefix: tables.DeptManagerPrefix(did)}
	ids, _, err := paging.ScanVerified(ctx, s.st, sc, weibo.MaxPageSize*weibo.MaxPageSize, 0,
		func(ctx context.Context, rows []*hbase.Result) ([]*weibo.UserID, error) {
			gets := make([]*hbase.Get, len(rows))
			uids := make([]weibo.UserID, len(rows))
			for i, r := range rows {
				_, uids[i], _ = tables.DecodeDeptManagerKey(r.Row)
				gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uids[i]), Families: []string{tables.FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*weibo.UserID, len(rows))
			for i, u := range us {
				if uids[i] != 0 && u.Value(tables.FamOrg, qual) != nil {
					out[i] = &uids[i]
				}
			}
			return out, nil
		})
	out := make([]weibo.UserID, len(ids))
	for i, id := range ids {
		out[i] = *id
	}
	return out, err
}

// Managed returns, for each user, the departments they manage,
// by department id: one GetMany of the users' family o, one of the
// departments (cells of departments that no longer exist are skipped).
func (s *Service) Managed(ctx context.Context, uids []weibo.UserID) (_ [][]*org.Department, err error) {
	defer weibo.Wrap(&err, "managed departments")
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	per := make([][]weibo.DeptID, len(uids))
	var all []weibo.DeptID
	for i, r := range rs {
		per[i] = org.ManagedIn(r)
		all = append(all, per[i]...)
	}
	out := make([][]*org.Department, len(uids))
	slices.Sort(all)
	all = slices.Compact(all)
	byID := map[weibo.DeptID]*org.Department{}
	if len(all) > 0 {
		ds, err := s.Get(ctx, all)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if d != nil {
				byID[d.ID] = d
			}
		}
	}
	for i, ids := range per {
		out[i] = []*org.Department{}
		for _, id := range ids {
			if d := byID[id]; d != nil {
				out[i] = append(out[i], d)
			}
		}
	}
	return out, nil
}
