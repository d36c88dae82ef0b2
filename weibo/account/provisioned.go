package account

import (
	"context"
	"crypto/rand"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Steps of a provisioned create (CreateProvisioned) besides the
// registration's, passed to the protocol's step hook.
const (
	// StepProvisionRow follows the users row's Put.
	StepProvisionRow = "provision:users-row"
	// StepProvisionUsername follows the claim of the username's row,
	// before the login name's (the authority).
	StepProvisionUsername = "provision:username"
)

// Provisioned is an account a provisioning client creates
// (CreateProvisioned).
type Provisioned struct {
	// Username returns candidate i (0, 1, ...) of the social username,
	// each fitting ValidUsername; "" ends the candidates.
	Username func(i int) string
	// LoginName is the login name when it is not the username (it does
	// not fit ValidUsername, or is another name): its lower case is a
	// second usernames row, the create's authority. "" for none.
	LoginName string
	// Password is the password (MinPasswordLen to MaxPasswordLen bytes);
	// "" gives the account a random one nobody knows.
	Password string
	// Info are more cells of family i of the users row (tables.Col*).
	Info map[string][]byte
}

// errNoUsername is CreateProvisioned's error when every candidate of the
// social username is taken.
var errNoUsername = weibo.BadReason("userName", weibo.ReasonUsernameTaken, "no free username is left to derive from this userName")

// HashPassword checks password (MinPasswordLen to MaxPasswordLen bytes of
// UTF-8; BAD_USER_INPUT on field "password") and returns its bcrypt hash
// at the service's cost.
func (s *Service) HashPassword(ctx context.Context, password string) ([]byte, error) {
	if len(password) < MinPasswordLen || len(password) > MaxPasswordLen || !utf8.ValidString(password) {
		return nil, weibo.BadInput("password", "password must be %d to %d bytes", MinPasswordLen, MaxPasswordLen)
	}
	return s.hashPassword(ctx, password)
}

// CreateProvisioned creates a provisioned user: a social username (the
// first free of p.Username's candidates) and, when p.LoginName is set, a
// login name of its own, both unique ignoring case among every username
// and login name. decided runs right after the user exists (its name
// claimed), before the user count; its error is the call's (the user
// stays). Errors: BAD_USER_INPUT on "password"; on "userName" with reason
// USERNAME_TAKEN when the login name (or, without one, the username) is
// taken or no candidate is free; decided's; the store's.
//
// Writes, in order (package counted explains the scheme; Register's
// relation): the id from the users' sequence; the registration's pending
// row and the user count's operation sequence; the users row, every cell
// (the username the first candidate); the username's weibo:usernames row
// with CheckAndPut (absent) — lost: the users row's username becomes the
// next candidate and its row is claimed again —; without a login name
// that row is the authority, with one the login name's row with
// CheckAndPut (absent) is (lost: the username's row and the users row are
// deleted, USERNAME_TAKEN); decided; the user count +1; the pending row's
// delete. A crash between the two usernames rows leaves a user whose
// login name names no row: fsck (package provision) claims it, or undoes
// the user when another took it.
func (s *Service) CreateProvisioned(ctx context.Context, p Provisioned, decided func(ctx context.Context, uid weibo.UserID) error) (_ *weibo.User, err error) {
	defer weibo.Wrap(&err, "create a provisioned user")
	var hash []byte
	if p.Password != "" {
		if hash, err = s.HashPassword(ctx, p.Password); err != nil {
			return nil, err
		}
	} else if hash, err = s.hashPassword(ctx, rand.Text()); err != nil {
		return nil, err
	}
	if p.LoginName != "" {
		if uid, err := s.lookupUsername(ctx, strings.ToLower(p.LoginName)); err != nil {
			return nil, err
		} else if uid != 0 {
			return nil, weibo.BadReason("userName", weibo.ReasonUsernameTaken, "userName "+p.LoginName+" is taken")
		}
	}
	uid, op, err := s.beginUser(ctx)
	if err != nil {
		return nil, err
	}
	created := s.w.NowMillis()
	info := map[string][]byte{tables.ColPassword: hash, tables.ColCreated: tables.EncodeMillis(created)}
	for q, v := range p.Info {
		info[q] = v
	}
	row := tables.UserKey(uid)
	undo := func() {
		_ = s.st.Delete(context.WithoutCancel(ctx), &hbase.Delete{Table: tables.Users, Row: row})
	}
	var username string
	for i := 0; ; i++ {
		if username = p.Username(i); username == "" {
			undo()
			return nil, s.endLost(ctx, op, errNoUsername)
		}
		if free, err := s.usernameFree(ctx, username); err != nil {
			return nil, err
		} else if !free {
			continue
		}
		info[tables.ColUsername] = []byte(username)
		put := &hbase.Put{Table: tables.Users, Row: row, Values: hbase.Values{tables.FamInfo: info,
			tables.FamCount: {tables.ColFollows: tables.EncodeCounter(0), tables.ColFans: tables.EncodeCounter(0), tables.ColPosts: tables.EncodeCounter(0)}}}
		if err := s.st.Put(ctx, put); err != nil {
			return nil, err
		}
		if err := s.w.Step(ctx, StepProvisionRow); err != nil {
			return nil, err
		}
		ok, err := s.claimName(ctx, username, uid)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
	}
	if p.LoginName != "" {
		if err := s.w.Step(ctx, StepProvisionUsername); err != nil {
			return nil, err
		}
		ok, err := s.claimName(ctx, p.LoginName, uid)
		if err != nil {
			return nil, err
		}
		if !ok {
			_, _ = s.st.CheckAndDelete(context.WithoutCancel(ctx), &hbase.Delete{Table: tables.Usernames, Row: tables.UsernameKey(username)},
				tables.FamName, tables.ColUID, tables.EncodeID(uid))
			undo()
			return nil, s.endLost(ctx, op, weibo.BadReason("userName", weibo.ReasonUsernameTaken, "userName "+p.LoginName+" is taken"))
		}
	}
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, err
	}
	if decided != nil {
		if err := decided(ctx, uid); err != nil {
			return nil, err
		}
	}
	if _, err := s.w.Count(ctx, op, 1); err != nil {
		return nil, err
	}
	if err := s.w.End(ctx, op); err != nil {
		return nil, err
	}
	return &weibo.User{ID: uid, Username: username, CreatedAt: time.UnixMilli(created), Complete: true}, nil
}

// usernameFree reports whether no usernames row holds name.
func (s *Service) usernameFree(ctx context.Context, name string) (bool, error) {
	uid, err := s.lookupUsername(ctx, strings.ToLower(name))
	return uid == 0, err
}

// claimName points the usernames row of name (lower-cased) at uid with
// CheckAndPut (absent); false when another holds it.
func (s *Service) claimName(ctx context.Context, name string, uid weibo.UserID) (bool, error) {
	return s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Usernames, Row: tables.UsernameKey(name), Values: hbase.Values{
		tables.FamName: {tables.ColUID: tables.EncodeID(uid)},
	}}, tables.FamName, tables.ColUID, nil)
}

// ClaimLoginName points the usernames row of name (lower-cased) at uid
// with CheckAndPut (absent): true when it was claimed or already names
// uid, false when another user holds it. Errors are the store's.
func (s *Service) ClaimLoginName(ctx context.Context, name string, uid weibo.UserID) (_ bool, err error) {
	defer weibo.Wrap(&err, "claim a login name")
	ok, err := s.claimName(ctx, name, uid)
	if err != nil || ok {
		return ok, err
	}
	cur, err := s.lookupUsername(ctx, strings.ToLower(name))
	return cur == uid, err
}

// ReleaseLoginName deletes the usernames row of name (lower-cased) when
// it names uid (CheckAndDelete). Errors are the store's.
func (s *Service) ReleaseLoginName(ctx context.Context, name string, uid weibo.UserID) (err error) {
	defer weibo.Wrap(&err, "release a login name")
	_, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Usernames, Row: tables.UsernameKey(name)},
		tables.FamName, tables.ColUID, tables.EncodeID(uid))
	return err
}

// endLost ends a create that lost its name: the pending row's delete,
// then lost (the store's error instead when the delete fails).
func (s *Service) endLost(ctx context.Context, op *counted.Op, lost error) error {
	if err := s.w.End(ctx, op); err != nil {
		return err
	}
	return lost
}
