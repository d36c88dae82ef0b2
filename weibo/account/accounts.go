package account

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// RegisteredIDBase is added to the id sequence to make the ids of users
// who register through the API; it keeps them clear of the data set's ids
// (1..76851) so a later seed never collides with them.
const RegisteredIDBase = 100_000_000

// usernameRE is what registration accepts.
var usernameRE = regexp.MustCompile(`^[A-Za-z0-9_]{3,32}$`)

// MaxLoginNameLength is the longest login name, in characters (runes).
const MaxLoginNameLength = 128

// ValidUsername reports whether name fits the username rule: 3 to 32
// letters, digits or underscores.
func ValidUsername(name string) bool { return usernameRE.MatchString(name) }

// ValidLoginName reports whether name may be a login name, and so what a
// lookup may ask for: 1 to MaxLoginNameLength printable characters of
// valid UTF-8 (a username — seeded users are "u<id>", as short as "u1" —
// or a provisioned user's login name such as "test.user@okta.local").
func ValidLoginName(name string) bool {
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxLoginNameLength {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Password length bounds, in bytes (bcrypt reads at most 72).
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72
)

// Register creates a user with a unique username (3-32 of A-Z a-z 0-9 _,
// unique case-insensitively) and a password of 8 to 72 bytes, stored only
// as a bcrypt hash. Errors: BAD_USER_INPUT for an invalid username or
// password, and also (with reason USERNAME_TAKEN) when the username is taken.
//
// Writes, in order (package counted explains the scheme): the id from
// the users' sequence; the registration's weibo:pending row and the
// operation sequence of the user count (counted.Protocol.Begin); the users
// row under the fresh id; the usernames row with CheckAndPut (absent), the
// authority that decides the registration; the user count +1 (within the
// write's budget); the pending row's delete. Losing the race or failing at
// the usernames row deletes the users row; a crash before it leaves only
// an unreachable users row, which no read and no count sees, and a crash
// after it leaves the pending row, whose repair recounts the users.
func (s *Service) Register(ctx context.Context, username, password string) (_ *weibo.User, err error) {
	defer weibo.Wrap(&err, "register")
	if !usernameRE.MatchString(username) {
		return nil, weibo.BadInput("username", "username must be 3 to 32 letters, digits or underscores")
	}
	if len(password) < MinPasswordLen || len(password) > MaxPasswordLen || !utf8.ValidString(password) {
		return nil, weibo.BadInput("password", "password must be %d to %d bytes", MinPasswordLen, MaxPasswordLen)
	}
	lower := strings.ToLower(username)
	if r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(lower)}); err != nil {
		return nil, err
	} else if r.Exists() {
		return nil, errTaken(username)
	}
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return nil, err
	}
	uid, op, err := s.beginUser(ctx)
	if err != nil {
		return nil, err
	}
	created := s.w.NowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{
		tables.FamInfo:  {tables.ColUsername: []byte(username), tables.ColPassword: hash, tables.ColCreated: tables.EncodeMillis(created)},
		tables.FamCount: {tables.ColFollows: tables.EncodeCounter(0), tables.ColFans: tables.EncodeCounter(0), tables.ColPosts: tables.EncodeCounter(0)},
	}}); err != nil {
		return nil, err
	}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Usernames, Row: tables.UsernameKey(lower), Values: hbase.Values{
		tables.FamName: {tables.ColUID: tables.EncodeID(uid)},
	}}, tables.FamName, tables.ColUID, nil)
	if err != nil || !ok {
		// Undo the users row; it is unreachable without the index row anyway.
		_ = s.st.Delete(context.WithoutCancel(ctx), &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid)})
		if err != nil {
			return nil, err
		}
		if err := s.w.End(ctx, op); err != nil {
			return nil, err
		}
		return nil, errTaken(username)
	}
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, err
	}
	if _, err := s.w.Count(ctx, op, 1); err != nil {
		return nil, err
	}
	if err := s.w.End(ctx, op); err != nil {
		return nil, err
	}
	return &weibo.User{ID: uid, Username: username, CreatedAt: time.UnixMilli(created), Complete: true}, nil
}

// beginUser takes a new user's id from the users' sequence and begins
// its registration's counted write (the register relation's marker).
// Errors are the store's.
func (s *Service) beginUser(ctx context.Context) (weibo.UserID, *counted.Op, error) {
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Users, Row: tables.SeqKey, Family: tables.FamCount, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return 0, nil, err
	}
	uid := weibo.UserID(RegisteredIDBase + seq)
	op, err := s.w.Begin(ctx, s.rel, uint64(uid), 0)
	if err != nil {
		return 0, nil, err
	}
	return uid, op, nil
}

// Login checks a login name — a username or a provisioned user's login
// name (tables.ColLoginName), either case-insensitive — and password. Errors:
// UNAUTHENTICATED for an unknown user or a wrong password (the same message
// and, through a comparison with a dummy hash, the same time for both);
// BAD_USER_INPUT for a password over 72 bytes; ACCOUNT_SUSPENDED, after
// the password was found right, for a suspended user (SetSuspensions).
func (s *Service) Login(ctx context.Context, username, password string) (_ *weibo.User, err error) {
	defer weibo.Wrap(&err, "login")
	if err := checkLoginPassword(password); err != nil {
		return nil, err
	}
	if !ValidLoginName(username) {
		return nil, s.failLogin(ctx, password)
	}
	uid, err := s.lookupUsername(ctx, strings.ToLower(username))
	if err != nil {
		return nil, err
	}
	if uid == 0 {
		return nil, s.failLogin(ctx, password)
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid)})
	if err != nil {
		return nil, err
	}
	if !r.Exists() || !namesRow(r, username) {
		return nil, s.failLogin(ctx, password)
	}
	if err := comparePassword(ctx, r.Value(tables.FamInfo, tables.ColPassword), password); err != nil {
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return nil, errBadLogin
		}
		return nil, err
	}
	if err := s.suspendedError(uid); err != nil {
		return nil, err
	}
	return userFromRow(uid, r), nil
}

// namesRow reports whether the users row r holds name (ignoring case)
// as its username or its login name: a usernames row left naming the user
// by a change that died does not log in.
func namesRow(r *hbase.Result, name string) bool {
	lower := strings.ToLower(name)
	return strings.ToLower(string(r.Value(tables.FamInfo, tables.ColUsername))) == lower ||
		strings.ToLower(string(r.Value(tables.FamInfo, tables.ColLoginName))) == lower
}

func (s *Service) lookupUsername(ctx context.Context, lower string) (weibo.UserID, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(lower)})
	if err != nil {
		return 0, err
	}
	return tables.UsernameUser(r), nil
}

// UserByUsername returns the user with that username or login name
// (case-insensitive), or nil when there is none.
func (s *Service) UserByUsername(ctx context.Context, username string) (_ *weibo.User, err error) {
	defer weibo.Wrap(&err, "user by username")
	if !ValidLoginName(username) {
		return nil, nil
	}
	uid, err := s.lookupUsername(ctx, strings.ToLower(username))
	if err != nil || uid == 0 {
		return nil, err
	}
	us, err := s.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	return us[0], nil
}

// GetUsers reads users by id with one batched GetMany; the result has one
// entry per id, nil where the user does not exist.
func (s *Service) GetUsers(ctx context.Context, ids []weibo.UserID) (_ []*weibo.User, err error) {
	defer weibo.Wrap(&err, "get users")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(id), Families: []string{tables.FamInfo, tables.FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*weibo.User, len(ids))
	for i, r := range rs {
		if r.Value(tables.FamInfo, tables.ColUsername) != nil {
			out[i] = userFromRow(ids[i], r)
		}
	}
	return out, nil
}

func userFromRow(uid weibo.UserID, r *hbase.Result) *weibo.User {
	return &weibo.User{
		ID:          uid,
		Username:    string(r.Value(tables.FamInfo, tables.ColUsername)),
		CreatedAt:   time.UnixMilli(tables.CreatedAt(r)),
		FollowCount: tables.CounterValue(r, tables.ColFollows),
		FanCount:    tables.CounterValue(r, tables.ColFans),
		PostCount:   tables.CounterValue(r, tables.ColPosts),
		DisplayName: tables.DisplayName(r),
		Bio:         tables.Bio(r),
		// Registration writes no generation: it reads as 0.
		TokenGeneration:     tables.TokenGeneration(r),
		UnreadNotifications: tables.CounterValue(r, tables.ColUnread),
		BlockCount:          tables.CounterValue(r, tables.ColBlockCount),
		LoginName:           string(r.Value(tables.FamInfo, tables.ColLoginName)),
		ExternalID:          string(r.Value(tables.FamInfo, tables.ColExternalID)),
		ProvisionedBy:       string(r.Value(tables.FamInfo, tables.ColProvisionedBy)),
		Closed:              r.Value(tables.FamInfo, tables.ColClosedAt) != nil,
		Complete:            true,
	}
}
