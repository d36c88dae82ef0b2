package weibo

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// User is a user as stored in weibo:users. A User built from a post's
// denormalized author name has only ID and Username (Complete false); the
// API layer loads the rest through a batched GetUsers when asked for it.
type User struct {
	// ID is the user's id.
	ID UserID
	// Username is the name chosen at registration ("u<id>" for seeded users).
	Username string
	// CreatedAt is the registration (or import) time.
	CreatedAt time.Time
	// FollowCount, FanCount and PostCount are the counters of family c.
	FollowCount, FanCount, PostCount int64
	// Complete is true when every field above was read from the users row.
	Complete bool
}

// RegisteredIDBase is added to the id sequence to make the ids of users
// who register through the API; it keeps them clear of the data set's ids
// (1..76851) so a later seed never collides with them.
const RegisteredIDBase = 100_000_000

var (
	// usernameRE is what registration accepts.
	usernameRE = regexp.MustCompile(`^[A-Za-z0-9_]{3,32}$`)
	// lookupRE is what a lookup may ask for: seeded users are "u<id>", as
	// short as "u1".
	lookupRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)
)

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
// Writes, in order: the users row under a fresh id, then the usernames row
// with CheckAndPut (absent). Losing the race or failing there deletes the
// users row; a crash in between leaves only an unreachable users row.
func (s *Service) Register(ctx context.Context, username, password string) (*User, error) {
	if !usernameRE.MatchString(username) {
		return nil, badInput("username", "username must be 3 to 32 letters, digits or underscores")
	}
	if len(password) < MinPasswordLen || len(password) > MaxPasswordLen || !utf8.ValidString(password) {
		return nil, badInput("password", "password must be %d to %d bytes", MinPasswordLen, MaxPasswordLen)
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
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Users, Row: tables.SeqKey, Family: tables.FamCount, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	uid := UserID(RegisteredIDBase + seq)
	created := s.nowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{
		tables.FamInfo:  {tables.ColUsername: []byte(username), tables.ColPassword: hash, tables.ColCreated: tables.U64(uint64(created))},
		tables.FamCount: {tables.ColFollows: tables.U64(0), tables.ColFans: tables.U64(0), tables.ColPosts: tables.U64(0)},
	}}); err != nil {
		return nil, err
	}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Usernames, Row: tables.UsernameKey(lower), Values: hbase.Values{
		tables.FamName: {tables.ColUID: tables.U64(uint64(uid))},
	}}, tables.FamName, tables.ColUID, nil)
	if err != nil || !ok {
		// Undo the users row; it is unreachable without the index row anyway.
		_ = s.st.Delete(context.WithoutCancel(ctx), &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid)})
		if err != nil {
			return nil, err
		}
		return nil, errTaken(username)
	}
	return &User{ID: uid, Username: username, CreatedAt: time.UnixMilli(created), Complete: true}, nil
}

// Login checks a username (case-insensitive) and password. Errors:
// UNAUTHENTICATED for an unknown user or a wrong password (the same message
// and, through a comparison with a dummy hash, the same time for both);
// BAD_USER_INPUT for a password over 72 bytes.
func (s *Service) Login(ctx context.Context, username, password string) (*User, error) {
	if err := checkLoginPassword(password); err != nil {
		return nil, err
	}
	if !lookupRE.MatchString(username) {
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
	if !r.Exists() {
		return nil, s.failLogin(ctx, password)
	}
	if err := comparePassword(ctx, r.Value(tables.FamInfo, tables.ColPassword), password); err != nil {
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return nil, errBadLogin
		}
		return nil, err
	}
	return userFromRow(uid, r), nil
}

func (s *Service) lookupUsername(ctx context.Context, lower string) (UserID, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(lower)})
	if err != nil {
		return 0, err
	}
	return UserID(tables.DecodeU64(r.Value(tables.FamName, tables.ColUID))), nil
}

// UserByUsername returns the user with that username (case-insensitive), or
// nil when there is none.
func (s *Service) UserByUsername(ctx context.Context, username string) (*User, error) {
	if !lookupRE.MatchString(username) {
		return nil, nil
	}
	uid, err := s.lookupUsername(ctx, strings.ToLower(username))
	if err != nil || uid == 0 {
		return nil, err
	}
	us, err := s.GetUsers(ctx, []UserID{uid})
	if err != nil {
		return nil, err
	}
	return us[0], nil
}

// GetUsers reads users by id with one batched GetMany; the result has one
// entry per id, nil where the user does not exist.
func (s *Service) GetUsers(ctx context.Context, ids []UserID) ([]*User, error) {
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(id), Families: []string{tables.FamInfo, tables.FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*User, len(ids))
	for i, r := range rs {
		if r.Value(tables.FamInfo, tables.ColUsername) != nil {
			out[i] = userFromRow(ids[i], r)
		}
	}
	return out, nil
}

func userFromRow(uid UserID, r *hbase.Result) *User {
	return &User{
		ID:          uid,
		Username:    string(r.Value(tables.FamInfo, tables.ColUsername)),
		CreatedAt:   time.UnixMilli(int64(tables.DecodeU64(r.Value(tables.FamInfo, tables.ColCreated)))),
		FollowCount: int64(tables.DecodeU64(r.Value(tables.FamCount, tables.ColFollows))),
		FanCount:    int64(tables.DecodeU64(r.Value(tables.FamCount, tables.ColFans))),
		PostCount:   int64(tables.DecodeU64(r.Value(tables.FamCount, tables.ColPosts))),
		Complete:    true,
	}
}
