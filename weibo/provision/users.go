package provision

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// displayNameRule is the profile's display-name rule (package account's).
var displayNameRule = weibo.TextRule{Field: "displayName", MaxChars: account.MaxDisplayNameLength,
	MaxBytes: account.MaxDisplayNameBytes, OneLine: true, Plain: true}

// maxAttempts bounds the retries of a change whose versioned write lost
// to a concurrent one (without If-Match).
const maxAttempts = 8

// userCells are the cells of family i a user input sets, every one
// present: an empty value is a cleared attribute (read as absent).
type userCells struct {
	displayName, externalID string
	attrs                   []byte
}

// checkUser validates in and returns the cells it sets. Errors:
// BAD_USER_INPUT on the attribute.
func checkUser(in UserInput) (userCells, error) {
	if err := checkUserName(in.UserName); err != nil {
		return userCells{}, err
	}
	if err := checkExternalID(in.ExternalID); err != nil {
		return userCells{}, err
	}
	c := userCells{externalID: in.ExternalID}
	if in.DisplayName != "" {
		c.displayName = weibo.NormalizeText(in.DisplayName)
		if err := weibo.ValidateText(displayNameRule, c.displayName); err != nil {
			return userCells{}, err
		}
	}
	b, err := json.Marshal(in.Attrs)
	if err != nil {
		return userCells{}, weibo.BadInput("attributes", "the attributes do not encode")
	}
	if string(b) != "{}" {
		c.attrs = b
	}
	if in.Password != "" && (len(in.Password) < account.MinPasswordLen || len(in.Password) > account.MaxPasswordLen) {
		return userCells{}, weibo.BadInput("password", "password must be %d to %d bytes", account.MinPasswordLen, account.MaxPasswordLen)
	}
	return c, nil
}

// info is c as family i cells (empty values for cleared ones), with the
// login name ("" clears it), the modification time and version.
func (c userCells) info(loginName string, now, version int64) map[string][]byte {
	return map[string][]byte{
		tables.ColDisplayName:  []byte(c.displayName),
		tables.ColExternalID:   []byte(c.externalID),
		tables.ColScimAttrs:    orEmpty(c.attrs),
		tables.ColLoginName:    []byte(loginName),
		tables.ColScimModified: tables.EncodeMillis(now),
		tables.ColScimVersion:  tables.U64(uint64(version)),
	}
}

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// CreateUser creates a user for client c (package doc: the names, the
// write order) and returns it as stored. Errors: BAD_USER_INPUT on the
// attribute at fault; with reason USERNAME_TAKEN when in.UserName is
// taken, ignoring case; the store's.
func (s *Service) CreateUser(ctx context.Context, c Client, in UserInput) (_ *User, err error) {
	defer weibo.Wrap(&err, "provision a user")
	ctx = clientContext(ctx, c)
	cells, err := checkUser(in)
	if err != nil {
		return nil, err
	}
	p := account.Provisioned{Password: in.Password}
	if account.ValidUsername(in.UserName) {
		p.Username = func(i int) string {
			if i == 0 {
				return in.UserName
			}
			return ""
		}
	} else {
		p.LoginName = in.UserName
		p.Username = func(i int) string { return DeriveUsername(in.UserName, i) }
	}
	now := s.w.NowMillis()
	p.Info = cells.info(p.LoginName, now, 1)
	p.Info[tables.ColProvisionedBy] = []byte(c.Name)
	delete(p.Info, tables.ColScimModified) // modified when created
	u, err := s.Accounts.CreateProvisioned(ctx, p, func(ctx context.Context, uid weibo.UserID) error {
		return s.manage(ctx, c, uid, cells.externalID, now)
	})
	if err != nil {
		if e, ok := errors.AsType[*weibo.Error](err); ok && e.Reason == weibo.ReasonUsernameTaken {
			return nil, weibo.BadReason("userName", weibo.ReasonUsernameTaken, "userName "+in.UserName+" is taken")
		}
		return nil, err
	}
	if !in.Active {
		if _, err := s.Suspensions.Suspend(ctx, u.ID, nil, "deactivated by SCIM client "+c.Name); err != nil {
			return nil, err
		}
	}
	return s.GetUser(ctx, u.ID)
}

// manage writes a created user's externalId index row, then its managed
// row carrying the user.provision audit event's proof.
func (s *Service) manage(ctx context.Context, c Client, uid weibo.UserID, ext string, now int64) (err error) {
	rec, err := s.Audit.Record(ctx, ActionProvision, org.UserNode(uid), nil,
		map[string]any{"client": c.Name, "externalId": ext}, managedProof(uid))
	if err != nil {
		return err
	}
	defer s.Audit.Finish(ctx, rec, &err)
	if ext != "" {
		if err := s.putIndex(ctx, 'u', ext, uint64(uid), now); err != nil {
			return err
		}
	}
	if err := s.w.Step(ctx, StepIndexed); err != nil {
		return err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid),
		Values: rec.Proven(managedValues(c.Name, now))}); err != nil {
		return err
	}
	rec.Commit()
	return s.w.Step(ctx, StepManaged)
}

// managedValues are the cells of a managed row.
func managedValues(client string, now int64) hbase.Values {
	return hbase.Values{tables.FamScim: {tables.ColScimClient: []byte(client), tables.ColScimAt: tables.EncodeMillis(now)}}
}

// managedProof is the audit proof of a create: its managed row.
func managedProof(uid weibo.UserID) audit.Proof {
	return audit.Proof{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid), Family: tables.FamScim}
}

// userProof is the audit proof of a change of a user's cells: the users
// row, family i.
func userProof(uid weibo.UserID) audit.Proof {
	return audit.Proof{Table: tables.Users, Row: tables.UserKey(uid), Family: tables.FamInfo}
}

// putIndex writes the externalId index row of object id of kind.
func (s *Service) putIndex(ctx context.Context, kind byte, ext string, id uint64, now int64) error {
	return s.st.Put(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimExternalIDKey(kind, ext, id),
		Values: hbase.Values{tables.FamScim: {tables.ColScimAt: tables.EncodeMillis(now)}}})
}

// deleteIndex deletes the externalId index row of object id of kind.
func (s *Service) deleteIndex(ctx context.Context, kind byte, ext string, id uint64) error {
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimExternalIDKey(kind, ext, id)})
}

// readUser reads user uid's row, families i and o; nil when the user does
// not exist or is closed.
func (s *Service) readUser(ctx context.Context, uid weibo.UserID) (*hbase.Result, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamOrg}})
	if err != nil || !liveUser(r) {
		return nil, err
	}
	return r, nil
}

// liveUser reports whether a users row is a user's (its username) not
// closed.
func liveUser(r *hbase.Result) bool {
	return r.Value(tables.FamInfo, tables.ColUsername) != nil && r.Value(tables.FamInfo, tables.ColClosedAt) == nil
}

func errNoUser(uid weibo.UserID) error { return weibo.NotFound("user %s not found", uid) }

// GetUser returns user uid as SCIM shows it. Errors: NOT_FOUND for no
// user or a closed one; the store's.
func (s *Service) GetUser(ctx context.Context, uid weibo.UserID) (_ *User, err error) {
	defer weibo.Wrapf(&err, "get user %s", uid)
	us, err := s.users(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, errNoUser(uid)
	}
	return us[0], nil
}

// users reads users by id: one entry per id, nil where none or closed.
// One GetMany of the users rows, one of their departments and roles.
func (s *Service) users(ctx context.Context, uids []weibo.UserID) ([]*User, error) {
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	var ngets []*hbase.Get
	var nodes []weibo.NodeID
	seen := map[weibo.NodeID]bool{}
	add := func(n weibo.NodeID, g *hbase.Get) {
		if !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
			ngets = append(ngets, g)
		}
	}
	for _, r := range rs {
		if !liveUser(r) {
			continue
		}
		if did := tables.DecodeDeptID(r.Value(tables.FamOrg, tables.ColUserDept)); did != weibo.RootDept {
			add(org.DeptNode(did), &hbase.Get{Table: tables.Departments, Row: tables.DeptKey(did), Families: []string{tables.FamInfo}})
		}
		for _, cell := range r.Family(tables.FamOrg) {
			if rid, ok := tables.DecodeRoleQualifier(cell.Qualifier); ok {
				add(org.RoleNode(rid), &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(rid), Families: []string{tables.FamInfo}})
			}
		}
	}
	names := map[weibo.NodeID]string{}
	if len(ngets) > 0 {
		nrs, err := s.st.GetMany(ctx, ngets)
		if err != nil {
			return nil, err
		}
		for i, n := range nodes {
			q := tables.ColRoleName
			if n.Kind == weibo.NodeDepartment {
				q = tables.ColDeptName
			}
			if v := nrs[i].Value(tables.FamInfo, q); v != nil {
				names[n] = string(v)
			}
		}
	}
	now := s.w.NowMillis()
	out := make([]*User, len(uids))
	for i, r := range rs {
		if liveUser(r) {
			out[i] = s.userOf(uids[i], r, names, now)
		}
	}
	return out, nil
}

// userOf decodes user uid from its row r (families i and o), naming its
// groups from names.
func (s *Service) userOf(uid weibo.UserID, r *hbase.Result, names map[weibo.NodeID]string, now int64) *User {
	u := &User{
		ID:            uid,
		Username:      text(r, tables.ColUsername),
		ExternalID:    text(r, tables.ColExternalID),
		DisplayName:   text(r, tables.ColDisplayName),
		Created:       time.UnixMilli(tables.CreatedAt(r)),
		Modified:      modifiedOf(r),
		ProvisionedBy: text(r, tables.ColProvisionedBy),
		Active:        !s.Suspensions.Suspended(uid, now),
	}
	u.UserName = text(r, tables.ColLoginName)
	if u.UserName == "" {
		u.UserName = u.Username
	}
	_, u.Version = versionOf(r)
	if a := r.Value(tables.FamInfo, tables.ColScimAttrs); len(a) > 0 {
		_ = json.Unmarshal(a, &u.Attrs)
	}
	if did := tables.DecodeDeptID(r.Value(tables.FamOrg, tables.ColUserDept)); did != weibo.RootDept {
		if name, ok := names[org.DeptNode(did)]; ok {
			u.Groups = append(u.Groups, GroupRef{ID: org.DeptNode(did).String(), Display: name, Kind: KindDepartment})
		}
	}
	var rids []weibo.RoleID
	for _, c := range r.Family(tables.FamOrg) {
		if rid, ok := tables.DecodeRoleQualifier(c.Qualifier); ok {
			rids = append(rids, rid)
		}
	}
	slices.Sort(rids)
	for _, rid := range rids {
		if name, ok := names[org.RoleNode(rid)]; ok {
			u.Groups = append(u.Groups, GroupRef{ID: org.RoleNode(rid).String(), Display: name, Kind: KindRole})
		}
	}
	return u
}

// ReplaceUser sets every attribute of user uid to in for client c and
// returns the user as stored; ifVersion, when set, is the version the
// client read. Errors: NOT_FOUND for no user or a closed one;
// BAD_USER_INPUT on the attribute at fault, with reason USERNAME_TAKEN
// for a taken userName, VERSION_MISMATCH for a stale ifVersion; FORBIDDEN
// when c may not act on the user (the rank rule); the store's.
//
// Writes, in order: a new externalId's index row; a new login name's
// usernames row (CheckAndPut absent); the audit event (user.update); the
// users row's cells with CheckAndPut on the version read (the commit
// point, carrying the event's proof; lost: the rows claimed are
// released and, without ifVersion, the change is tried again); the
// managed row when the user was not managed; the new and old login
// names' rows and index rows settled (settle.go: the old ones deleted
// unless a concurrent change took them back); then the suspension made
// or lifted when active changed.
func (s *Service) ReplaceUser(ctx context.Context, c Client, uid weibo.UserID, in UserInput, ifVersion *int64) (_ *User, err error) {
	defer weibo.Wrapf(&err, "replace user %s", uid)
	ctx = clientContext(ctx, c)
	cells, err := checkUser(in)
	if err != nil {
		return nil, err
	}
	var hash []byte
	if in.Password != "" {
		if hash, err = s.Accounts.HashPassword(ctx, in.Password); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		err := s.replaceOnce(ctx, c, uid, in, cells, hash, ifVersion)
		if err == nil {
			break
		}
		if err != errLost {
			return nil, err
		}
		if attempt == maxAttempts {
			return nil, org.ErrConcurrent("version", "the user keeps changing; retry")
		}
	}
	if err := s.setActive(ctx, c, uid, in.Active); err != nil {
		return nil, err
	}
	return s.GetUser(ctx, uid)
}

// errLost is an attempt's versioned write lost to a concurrent change
// (without ifVersion): the caller tries again. A refusal, so that the
// attempt's pending audit event is abandoned.
var errLost = org.ErrConcurrent("version", "the user changed meanwhile")

// readToChange reads user uid's row for a versioned change by client c:
// the row, its version cell as read and the version. NOT_FOUND for no
// user, VERSION_MISMATCH when ifVersion is not the version, FORBIDDEN
// under the rank rule; errors otherwise are the store's.
func (s *Service) readToChange(ctx context.Context, c Client, uid weibo.UserID, ifVersion *int64) (_ *hbase.Result, raw []byte, version int64, err error) {
	r, err := s.readUser(ctx, uid)
	if err != nil {
		return nil, nil, 0, err
	}
	if r == nil {
		return nil, nil, 0, errNoUser(uid)
	}
	raw, version = versionOf(r)
	if err := checkVersion(ifVersion, version); err != nil {
		return nil, nil, 0, err
	}
	if err := s.actOn(ctx, c, uid); err != nil {
		return nil, nil, 0, err
	}
	return r, raw, version, nil
}

// replaceOnce makes one attempt of ReplaceUser's write; errLost when its
// versioned write lost to a concurrent change (without ifVersion).
func (s *Service) replaceOnce(ctx context.Context, c Client, uid weibo.UserID, in UserInput, cells userCells, hash []byte, ifVersion *int64) (err error) {
	r, raw, version, err := s.readToChange(ctx, c, uid, ifVersion)
	if err != nil {
		return err
	}
	username, oldLogin, oldExt := text(r, tables.ColUsername), text(r, tables.ColLoginName), text(r, tables.ColExternalID)
	login := in.UserName
	if strings.EqualFold(login, username) {
		login = ""
	}
	claim := login != "" && !strings.EqualFold(login, oldLogin)
	now := s.w.NowMillis()
	if cells.externalID != "" && cells.externalID != oldExt {
		if err := s.putIndex(ctx, 'u', cells.externalID, uint64(uid), now); err != nil {
			return err
		}
		if err := s.w.Step(ctx, StepIndexed); err != nil {
			return err
		}
	}
	release := func() {
		bg := context.WithoutCancel(ctx)
		if claim {
			_ = s.settleLogin(bg, uid, login)
		}
		if cells.externalID != oldExt {
			_ = s.settleIndex(bg, 'u', cells.externalID, uint64(uid), tables.Users, tables.UserKey(uid))
		}
	}
	if claim {
		ok, err := s.Accounts.ClaimLoginName(ctx, login, uid)
		if err != nil {
			return err
		}
		if !ok {
			claim = false
			release()
			return weibo.BadReason("userName", weibo.ReasonUsernameTaken, "userName "+in.UserName+" is taken")
		}
		if err := s.w.Step(ctx, StepLoginClaimed); err != nil {
			return err
		}
	}
	before := map[string]any{"userName": firstOf(oldLogin, username), "externalId": oldExt, "version": version}
	after := map[string]any{"userName": in.UserName, "externalId": cells.externalID, "version": version + 1}
	rec, err := s.Audit.Record(ctx, ActionUpdate, org.UserNode(uid), before, after, userProof(uid))
	if err != nil {
		return err
	}
	defer s.Audit.Finish(ctx, rec, &err)
	info := cells.info(login, now, version+1)
	if hash != nil {
		info[tables.ColPassword] = hash
	}
	if r.Value(tables.FamInfo, tables.ColProvisionedBy) == nil {
		info[tables.ColProvisionedBy] = []byte(c.Name)
	}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid),
		Values: rec.Proven(hbase.Values{tables.FamInfo: info})}, tables.FamInfo, tables.ColScimVersion, raw)
	if err != nil {
		return err
	}
	if !ok {
		release()
		if ifVersion != nil {
			return errVersion(version + 1)
		}
		return errLost // a refusal: the deferred Finish abandons the event
	}
	rec.Commit()
	if err := s.w.Step(ctx, StepWritten); err != nil {
		return err
	}
	if _, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid),
		Values: managedValues(c.Name, now)}, tables.FamScim, tables.ColScimClient, nil); err != nil {
		return err
	}
	for _, name := range []string{login, oldLogin} {
		if name != "" {
			if err := s.settleLogin(ctx, uid, name); err != nil {
				return err
			}
		}
	}
	for _, ext := range []string{cells.externalID, oldExt} {
		if err := s.settleIndex(ctx, 'u', ext, uint64(uid), tables.Users, tables.UserKey(uid)); err != nil {
			return err
		}
	}
	return s.Audit.Settle(ctx, rec)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// actOn applies the rank rule to client c acting on user uid.
func (s *Service) actOn(ctx context.Context, c Client, uids ...weibo.UserID) error {
	errs, err := s.Authz.ActOnAs(ctx, standing(c), uids)
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// setActive suspends user uid (active false) or lifts their suspension
// (active true) when it differs.
func (s *Service) setActive(ctx context.Context, c Client, uid weibo.UserID, active bool) error {
	suspended := s.Suspensions.Suspended(uid, s.w.NowMillis())
	switch {
	case !active && !suspended:
		_, err := s.Suspensions.Suspend(ctx, uid, nil, "deactivated by SCIM client "+c.Name)
		return err
	case active && suspended:
		return s.Suspensions.Unsuspend(ctx, uid)
	}
	return nil
}

// DeleteUser closes user uid's account for client c (package doc).
// Errors: NOT_FOUND for no user or a closed one; BAD_USER_INPUT (reason
// VERSION_MISMATCH) for a stale ifVersion; FORBIDDEN by the rank rule;
// the store's.
//
// Writes, in order: the audit event (user.close); the users row's
// ColClosedAt with CheckAndPut on the version read (the commit point:
// from then on the user is closed); the suspension for good; each role's
// revoke and the department's leave (counted writes); the managed and
// index rows' deletes. fsck finishes what a crash leaves of them.
func (s *Service) DeleteUser(ctx context.Context, c Client, uid weibo.UserID, ifVersion *int64) (err error) {
	defer weibo.Wrapf(&err, "close user %s", uid)
	ctx = clientContext(ctx, c)
	for attempt := 0; ; attempt++ {
		err := s.closeOnce(ctx, c, uid, ifVersion)
		if err == nil {
			break
		}
		if err != errLost {
			return err
		}
		if attempt == maxAttempts {
			return org.ErrConcurrent("version", "the user keeps changing; retry")
		}
	}
	return s.finishClose(ctx, c.Name, uid)
}

// closeOnce makes one attempt of DeleteUser's versioned write; errLost
// as replaceOnce's.
func (s *Service) closeOnce(ctx context.Context, c Client, uid weibo.UserID, ifVersion *int64) (err error) {
	_, raw, version, err := s.readToChange(ctx, c, uid, ifVersion)
	if err != nil {
		return err
	}
	rec, err := s.Audit.Record(ctx, ActionClose, org.UserNode(uid), nil, map[string]any{"client": c.Name}, userProof(uid))
	if err != nil {
		return err
	}
	defer s.Audit.Finish(ctx, rec, &err)
	now := s.w.NowMillis()
	info := map[string][]byte{tables.ColClosedAt: tables.EncodeMillis(now), tables.ColScimModified: tables.EncodeMillis(now),
		tables.ColScimVersion: tables.U64(uint64(version + 1))}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid),
		Values: rec.Proven(hbase.Values{tables.FamInfo: info})}, tables.FamInfo, tables.ColScimVersion, raw)
	if err != nil {
		return err
	}
	if !ok {
		if ifVersion != nil {
			return errVersion(version + 1)
		}
		return errLost // a refusal: the deferred Finish abandons the event
	}
	rec.Commit()
	if err := s.Audit.Settle(ctx, rec); err != nil {
		return err
	}
	return s.w.Step(ctx, StepClosed)
}

// finishClose makes a closed user's account closed throughout: suspended
// for good, no role, no department, no managed or index row. Each step
// changes nothing when done already, so fsck runs it again.
func (s *Service) finishClose(ctx context.Context, client string, uid weibo.UserID) error {
	if good, err := s.suspendedForGood(ctx, uid); err != nil {
		return err
	} else if !good {
		if _, err := s.Suspensions.Suspend(ctx, uid, nil, "account closed by SCIM client "+client); err != nil {
			return err
		}
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamOrg}})
	if err != nil {
		return err
	}
	for _, cell := range r.Family(tables.FamOrg) {
		if rid, ok := tables.DecodeRoleQualifier(cell.Qualifier); ok {
			if _, err := s.Roles.Revoke(ctx, uid, rid); err != nil && weibo.CodeOf(err) != weibo.CodeNotFound {
				return err
			}
		}
	}
	if tables.DecodeDeptID(r.Value(tables.FamOrg, tables.ColUserDept)) != weibo.RootDept {
		if _, err := s.Members.Set(ctx, uid, weibo.RootDept); err != nil {
			return err
		}
	}
	if ext := text(r, tables.ColExternalID); ext != "" {
		if err := s.deleteIndex(ctx, 'u', ext, uint64(uid)); err != nil {
			return err
		}
	}
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimManagedUserKey(uid)})
}

// UserByName returns the live user whose login name or username is
// userName, ignoring case; nil when none. Errors are the store's.
func (s *Service) UserByName(ctx context.Context, userName string) (_ *User, err error) {
	defer weibo.Wrap(&err, "user by name")
	u, err := s.Accounts.UserByUsername(ctx, userName)
	if err != nil || u == nil {
		return nil, err
	}
	us, err := s.users(ctx, []weibo.UserID{u.ID})
	if err != nil || us[0] == nil {
		return nil, err
	}
	if !strings.EqualFold(us[0].UserName, userName) && !strings.EqualFold(us[0].Username, userName) {
		return nil, nil // a row a change that died left naming the user
	}
	return us[0], nil
}

// UsersByExternalID returns the live users whose externalId is ext (case
// exact), by id, from the index. Errors are the store's.
func (s *Service) UsersByExternalID(ctx context.Context, ext string) (_ []*User, err error) {
	defer weibo.Wrap(&err, "users by externalId")
	ids, err := s.indexed(ctx, 'u', ext)
	if err != nil {
		return nil, err
	}
	uids := make([]weibo.UserID, len(ids))
	for i, id := range ids {
		uids[i] = weibo.UserID(id)
	}
	us, err := s.users(ctx, uids)
	if err != nil {
		return nil, err
	}
	out := []*User{}
	for _, u := range us {
		if u != nil && u.ExternalID == ext {
			out = append(out, u)
		}
	}
	return out, nil
}

// indexed returns the ids the externalId index lists for kind and ext.
func (s *Service) indexed(ctx context.Context, kind byte, ext string) ([]uint64, error) {
	if ext == "" || strings.IndexByte(ext, 0) >= 0 {
		return nil, nil
	}
	var ids []uint64
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Scim, Prefix: append(tables.ScimExternalIDPrefix(kind, ext), 0)}, func(r *hbase.Result) error {
		if k, e, id, ok := tables.DecodeScimExternalIDKey(r.Row); ok && k == kind && e == ext {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// ListUsers returns up to n managed users (those with a weibo:scim managed
// row) after user id after (exclusive; 0: from the first), in id order.
// Errors are the store's.
func (s *Service) ListUsers(ctx context.Context, after weibo.UserID, n int) (_ []*User, err error) {
	defer weibo.Wrap(&err, "list managed users")
	if n <= 0 {
		return []*User{}, nil
	}
	start := tables.ScimManagedUsersStart
	if after != 0 {
		start = tables.ScimManagedUserKey(after + 1)
	}
	out := []*User{}
	for len(out) < n {
		var uids []weibo.UserID
		var last []byte
		err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Scim, Start: start, Stop: tables.ScimManagedUsersStop, Limit: n - len(out)}, func(r *hbase.Result) error {
			last = r.Row
			if uid, ok := tables.DecodeScimManagedUserKey(r.Row); ok {
				uids = append(uids, uid)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if last == nil {
			break
		}
		us, err := s.users(ctx, uids)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			if u != nil {
				out = append(out, u)
			}
		}
		start = append(append([]byte{}, last...), 0)
	}
	return out, nil
}

// PageUsers returns the number of users SCIM manages and those at
// positions offset..offset+n-1 of their list in id order (0-based): one
// scan of the managed rows' keys, then one batched read of the page's
// users. A managed row whose user is gone (a write a crash left, which
// fsck repairs) counts, and is left out of the page. Errors are the
// store's.
func (s *Service) PageUsers(ctx context.Context, offset, n int) (total int, page []*User, err error) {
	defer weibo.Wrap(&err, "page managed users")
	var uids []weibo.UserID
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Scim, Start: tables.ScimManagedUsersStart, Stop: tables.ScimManagedUsersStop}, func(r *hbase.Result) error {
		if uid, ok := tables.DecodeScimManagedUserKey(r.Row); ok {
			if total >= offset && len(uids) < n {
				uids = append(uids, uid)
			}
			total++
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	us, err := s.users(ctx, uids)
	if err != nil {
		return 0, nil, err
	}
	page = []*User{}
	for _, u := range us {
		if u != nil {
			page = append(page, u)
		}
	}
	return total, page, nil
}
