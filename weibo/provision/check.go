package provision

import (
	"bytes"
	"context"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Provisioning's part of `gateway fsck` (package check). The users row
// is the authority of a user's names, externalId and closing, and a
// department's or role's row of its externalId; what derives from them
// is checked against them, and repaired to agree:
//
//	issue                        found                                         repair
//	provision-username-stale     a usernames row naming a user whose row        deleted
//	                             holds neither that username nor login name
//	provision-login-missing      a user's login name without its usernames      claimed; when another
//	                             row (a create that died between its two rows)  holds it, the user undone
//	provision-managed-missing    a live user SCIM provisioned without its       written
//	                             managed row
//	provision-managed-stale      a managed row of a user that is gone or        deleted
//	                             closed
//	provision-index-missing      an externalId without its index row            written
//	provision-index-stale        an index row its object does not hold          deleted
//	provision-close-unfinished   a closed user not suspended for good, or       the close finished
//	                             still in a department or a role

// Kinds of check.Issue of provisioning.
const (
	IssueUsernameStale   = "provision-username-stale"
	IssueLoginMissing    = "provision-login-missing"
	IssueManagedMissing  = "provision-managed-missing"
	IssueManagedStale    = "provision-managed-stale"
	IssueIndexMissing    = "provision-index-missing"
	IssueIndexStale      = "provision-index-stale"
	IssueCloseUnfinished = "provision-close-unfinished"
)

// checkedUser is what the check keeps of a users row.
type checkedUser struct {
	username, login, ext, by string
	closed                   bool
	ts                       int64
}

// indexRow is an externalId index row.
type indexRow struct {
	key  []byte
	kind byte
	ext  string
	id   uint64
	ts   int64
}

// checker is the service as fsck's pass of provisioning runs it: the
// check's scans, issues and repairs, apart from the service's calls.
type checker struct{ *Service }

// fsckCheck is provisioning's check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: "provision", Start: func(p *check.Pass) check.Run {
		users := map[weibo.UserID]*checkedUser{}
		return check.Run{
			User: func(uid weibo.UserID, r *hbase.Result) {
				if r.Value(tables.FamInfo, tables.ColUsername) == nil {
					return
				}
				users[uid] = &checkedUser{username: text(r, tables.ColUsername), login: text(r, tables.ColLoginName),
					ext: text(r, tables.ColExternalID), by: text(r, tables.ColProvisionedBy),
					closed: r.Value(tables.FamInfo, tables.ColClosedAt) != nil, ts: check.NewestTS(r)}
			},
			Check: func(ctx context.Context) error { return checker{s}.check(ctx, p, users) },
		}
	}}
}

func (s checker) check(ctx context.Context, p *check.Pass, users map[weibo.UserID]*checkedUser) error {
	if err := s.checkNames(ctx, p, users); err != nil {
		return err
	}
	managed := map[weibo.UserID]bool{}
	var index []indexRow
	err := p.Scan(ctx, &hbase.Scan{Table: tables.Scim}, func(r *hbase.Result) {
		if uid, ok := tables.DecodeScimManagedUserKey(r.Row); ok {
			if u := users[uid]; u != nil && !u.closed && u.by != "" {
				managed[uid] = true
				return
			}
			managed[uid] = false
			index = append(index, indexRow{key: bytes.Clone(r.Row), kind: 0, id: uint64(uid), ts: check.NewestTS(r)})
		} else if kind, ext, id, ok := tables.DecodeScimExternalIDKey(r.Row); ok {
			index = append(index, indexRow{key: bytes.Clone(r.Row), kind: kind, ext: ext, id: id, ts: check.NewestTS(r)})
		}
	})
	if err != nil {
		return err
	}
	groups, err := s.groupExternalIDs(ctx, p)
	if err != nil {
		return err
	}
	indexed := map[string]bool{}
	for _, ix := range index {
		if ix.kind == 0 { // a managed row without its user
			err := p.Issue(IssueManagedStale, ix.ts, func() (bool, error) {
				return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: ix.key})
			}, "managed row of user %d, which is gone or closed", ix.id)
			if err != nil {
				return err
			}
			continue
		}
		holds := false
		if ix.kind == 'u' {
			u := users[weibo.UserID(ix.id)]
			holds = u != nil && !u.closed && u.ext == ix.ext
		} else {
			holds = groups[string(ix.kind)+itoa(int64(ix.id))] == ix.ext && ix.ext != ""
		}
		if holds {
			indexed[string(ix.key)] = true
			continue
		}
		err := p.Issue(IssueIndexStale, ix.ts, func() (bool, error) {
			return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: ix.key})
		}, "externalId index row %q of %c %d, which does not hold it", ix.ext, ix.kind, ix.id)
		if err != nil {
			return err
		}
	}
	for uid, u := range users {
		if u.closed {
			if err := s.checkClosed(ctx, p, uid, u); err != nil {
				return err
			}
			continue
		}
		if u.by != "" && !managed[uid] {
			err := p.Issue(IssueManagedMissing, u.ts, func() (bool, error) {
				return s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid),
					Values: managedValues(u.by, p.Now())}, tables.FamScim, tables.ColScimClient, nil)
			}, "user %d provisioned by %q has no managed row", uid, u.by)
			if err != nil {
				return err
			}
		}
		if u.ext != "" && !indexed[string(tables.ScimExternalIDKey('u', u.ext, uint64(uid)))] {
			if err := s.indexMissing(ctx, p, 'u', u.ext, uint64(uid), u.ts); err != nil {
				return err
			}
		}
	}
	for key, ext := range groups {
		id := uint64(0)
		for _, c := range key[1:] {
			id = id*10 + uint64(c-'0')
		}
		if ext != "" && !indexed[string(tables.ScimExternalIDKey(key[0], ext, id))] {
			if err := s.indexMissing(ctx, p, key[0], ext, id, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexMissing reports (and writes) the missing index row of object id.
func (s checker) indexMissing(ctx context.Context, p *check.Pass, kind byte, ext string, id uint64, ts int64) error {
	return p.Issue(IssueIndexMissing, ts, func() (bool, error) {
		return true, s.putIndex(ctx, kind, ext, id, p.Now())
	}, "%c %d has externalId %q without its index row", kind, id, ext)
}

// groupExternalIDs reads the externalId of every department and role
// holding one: "d<id>" or "r<id>" → externalId.
func (s checker) groupExternalIDs(ctx context.Context, p *check.Pass) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range []struct {
		table string
		kind  byte
	}{{tables.Departments, 'd'}, {tables.Roles, 'r'}} {
		err := p.Scan(ctx, &hbase.Scan{Table: t.table, Families: []string{tables.FamInfo}}, func(r *hbase.Result) {
			var id uint64
			if t.kind == 'd' {
				did, ok := tables.DecodeDeptKey(r.Row)
				if !ok || r.Value(tables.FamInfo, tables.ColDeptName) == nil {
					return
				}
				id = uint64(did)
			} else {
				rid, ok := tables.DecodeRoleKey(r.Row)
				if !ok || r.Value(tables.FamInfo, tables.ColRoleName) == nil {
					return
				}
				id = uint64(rid)
			}
			if ext := text(r, tables.ColExternalID); ext != "" {
				out[string(t.kind)+itoa(int64(id))] = ext
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkNames compares the usernames rows with the users rows: a row
// naming a user who holds neither that username nor that login name is
// stale; a user's login name without its row is missing. It drops from
// users those whose username's row does not name them.
func (s checker) checkNames(ctx context.Context, p *check.Pass, users map[weibo.UserID]*checkedUser) error {
	claimed := map[string]weibo.UserID{}
	var stale []func() error
	err := p.Scan(ctx, &hbase.Scan{Table: tables.Usernames}, func(r *hbase.Result) {
		uid := tables.UsernameUser(r)
		key := string(r.Row)
		claimed[key] = uid
		u := users[uid]
		if uid == 0 || u == nil || key == strings.ToLower(u.username) || (u.login != "" && key == strings.ToLower(u.login)) {
			return
		}
		ts := check.NewestTS(r)
		stale = append(stale, func() error {
			return p.Issue(IssueUsernameStale, ts, func() (bool, error) {
				return s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Usernames, Row: []byte(key)},
					tables.FamName, tables.ColUID, tables.EncodeID(uid))
			}, "usernames row %q names user %d, which holds neither that username nor that login name", key, uid)
		})
	})
	if err != nil {
		return err
	}
	for _, f := range stale {
		if err := f(); err != nil {
			return err
		}
	}
	for uid, u := range users {
		if claimed[strings.ToLower(u.username)] != uid {
			// A create that died before its username's row: the row is
			// unreachable, as a registration's that died (no read, no
			// count sees it), and no user here.
			delete(users, uid)
			continue
		}
		if u.login == "" || claimed[strings.ToLower(u.login)] == uid {
			continue
		}
		err := p.Issue(IssueLoginMissing, u.ts, func() (bool, error) {
			ok, err := s.Accounts.ClaimLoginName(ctx, u.login, uid)
			if err != nil || ok {
				return ok, err
			}
			return true, s.undoUser(ctx, uid, u)
		}, "user %d's login name %q has no usernames row naming the user", uid, u.login)
		if err != nil {
			return err
		}
	}
	return nil
}

// undoUser deletes a user whose create lost its login name and died: its
// username's row, its users row, its managed and index rows; then
// recounts the users.
func (s checker) undoUser(ctx context.Context, uid weibo.UserID, u *checkedUser) error {
	if err := s.Accounts.ReleaseLoginName(ctx, u.username, uid); err != nil {
		return err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid)}); err != nil {
		return err
	}
	if u.ext != "" {
		if err := s.deleteIndex(ctx, 'u', u.ext, uint64(uid)); err != nil {
			return err
		}
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid)}); err != nil {
		return err
	}
	_, err := s.w.RecountOne(ctx, account.UserCounter)()
	return err
}

// checkClosed reports a closed user whose close did not finish.
func (s checker) checkClosed(ctx context.Context, p *check.Pass, uid weibo.UserID, u *checkedUser) error {
	unfinished, err := s.closeUnfinished(ctx, uid)
	if err != nil || !unfinished {
		return err
	}
	return p.Issue(IssueCloseUnfinished, u.ts, func() (bool, error) {
		return true, s.finishClose(ctx, u.by, uid)
	}, "closed user %d is not suspended for good, or is still in a department or role", uid)
}

// closeUnfinished reports whether closed user uid is not suspended for
// good, or holds a department or role cell.
func (s checker) closeUnfinished(ctx context.Context, uid weibo.UserID) (bool, error) {
	good, err := s.suspendedForGood(ctx, uid)
	if err != nil || !good {
		return true, err
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
	if err != nil {
		return false, err
	}
	for _, c := range r.Family(tables.FamOrg) {
		if _, ok := tables.DecodeRoleQualifier(c.Qualifier); ok || c.Qualifier == tables.ColUserDept {
			return true, nil
		}
	}
	return false, nil
}

// suspendedForGood reports whether uid's suspension row holds a
// suspension without an end.
func (s *Service) suspendedForGood(ctx context.Context, uid weibo.UserID) (bool, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Suspensions, Row: tables.SuspensionKey(uid)})
	if err != nil {
		return false, err
	}
	c, ok := tables.DecodeSuspension(r)
	return ok && c.Until == 0, nil
}
