package account

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Tokens that end. A users row holds the user's token generation (i:tg)
// and, in family t, the ids of the tokens ended on their own (logout) until
// they expire; a token is good while its row holds its generation and does
// not name it (docs/schema.md, "Tokens that end"). The token check reads
// both with the user in one Get (ReadUserTokens).

// MaxEndedTokens bounds the records of family t a user may have: a logout
// that finds this many live ones ends all of the user's tokens instead
// (as LogoutEverywhere does), so that the token check, which reads the
// whole family, stays small.
const MaxEndedTokens = 100

// changeTries is how many times ChangePassword reads, checks and writes
// when a concurrent change of the row's generation beats it.
const changeTries = 3

// errWrongPassword is ChangePassword's answer for a wrong current password.
var errWrongPassword = &weibo.Error{Code: weibo.CodeUnauthenticated, Field: "currentPassword", Message: "the current password is wrong"}

// ReadUserTokens reads user uid's row with one Get of families i, c and t:
// the user (nil when absent) and the ids of its tokens ended on their own
// that have not expired. Errors are the store's.
func (s *Service) ReadUserTokens(ctx context.Context, uid weibo.UserID) (_ *weibo.User, ended []weibo.TokenID, err error) {
	defer weibo.Wrap(&err, "read user tokens")
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid),
		Families: []string{tables.FamInfo, tables.FamCount, tables.FamEndedTokens}})
	if err != nil {
		return nil, nil, err
	}
	if r.Value(tables.FamInfo, tables.ColUsername) == nil {
		return nil, nil, nil
	}
	return userFromRow(uid, r), tables.EndedTokens(r), nil
}

// checkNewPassword applies the password rules of Register to a new
// password named field: 8 to 72 bytes of valid UTF-8 (BAD_USER_INPUT).
func checkNewPassword(field, password string) error {
	if len(password) < MinPasswordLen || len(password) > MaxPasswordLen || !utf8.ValidString(password) {
		return weibo.BadInput(field, "%s must be %d to %d bytes", field, MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

// ChangePassword replaces user uid's password and ends every token issued
// before: it checks current against the stored hash, then writes the hash
// of next and the next token generation in one Put of the users row,
// conditional on the generation it read (CheckAndPut on i:tg), so nothing
// is half-written and of two changes at once the later one checks its
// current password against the earlier one's hash. It returns the user
// with its new TokenGeneration, for the token that replaces the ended
// ones, and publishes the ending on the bus (OnTokensEnded). Errors: BAD_USER_INPUT for a newPassword breaking the rules of
// Register or a currentPassword over 72 bytes; UNAUTHENTICATED for a wrong
// current password or a user that does not exist; BAD_USER_INPUT with
// reason CONCURRENT_UPDATE when other changes of the generation kept
// beating it (retrying is safe).
func (s *Service) ChangePassword(ctx context.Context, uid weibo.UserID, current, next string) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "change the password of %s", uid)
	if err := checkNewPassword("newPassword", next); err != nil {
		return nil, err
	}
	if len(current) > MaxPasswordLen {
		return nil, weibo.BadInput("currentPassword", "currentPassword must be at most %d bytes", MaxPasswordLen)
	}
	for range changeTries {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamCount}})
		if err != nil {
			return nil, err
		}
		if r.Value(tables.FamInfo, tables.ColUsername) == nil {
			return nil, weibo.ErrUnauthenticated
		}
		if err := comparePassword(ctx, r.Value(tables.FamInfo, tables.ColPassword), current); err != nil {
			if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
				return nil, errWrongPassword
			}
			return nil, err
		}
		hash, err := s.hashPassword(ctx, next)
		if err != nil {
			return nil, err
		}
		u := userFromRow(uid, r)
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{
			tables.FamInfo: {tables.ColPassword: hash, tables.ColTokenGen: tables.EncodeTokenGeneration(u.TokenGeneration + 1)},
		}}, tables.FamInfo, tables.ColTokenGen, tables.EncodeTokenGenerationCheck(u.TokenGeneration))
		if err != nil {
			return nil, err
		}
		if ok {
			u.TokenGeneration++
			s.emitTokensEnded(TokensEnded{User: uid, Below: u.TokenGeneration})
			return u, nil
		}
	}
	return nil, weibo.BadReason("currentPassword", weibo.ReasonConcurrentUpdate,
		"the account's tokens changed while the password was being changed: try again")
}

// EndToken ends one token of user uid (logout): the token id, expiring at
// expires, gets a record in the users row's family t that the family's TTL
// removes at that expiry. When the row holds MaxEndedTokens live records
// already it ends all of the user's tokens instead (EndAllTokens), and
// reports all true with the new generation. The ending is published on
// the bus (OnTokensEnded). Errors are the store's.
func (s *Service) EndToken(ctx context.Context, uid weibo.UserID, id weibo.TokenID, expires time.Time) (all bool, gen int64, err error) {
	defer weibo.Wrapf(&err, "end a token of %s", uid)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamEndedTokens}})
	if err != nil {
		return false, 0, err
	}
	if len(tables.EndedTokens(r)) >= MaxEndedTokens {
		gen, err := s.EndAllTokens(ctx, uid)
		return true, gen, err
	}
	exp := expires.UnixMilli()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Timestamp: tables.EndedTokenTimestamp(exp),
		Values: hbase.Values{tables.FamEndedTokens: {tables.EndedTokenQualifier(id): tables.EncodeMillis(exp)}}}); err != nil {
		return false, 0, err
	}
	s.emitTokensEnded(TokensEnded{User: uid, Token: id, Expires: expires})
	return false, 0, nil
}

// EndAllTokens ends every token of user uid issued so far (logoutEverywhere):
// it increments the users row's token generation and returns the new one,
// and publishes the ending on the bus (OnTokensEnded). Errors are the
// store's.
func (s *Service) EndAllTokens(ctx context.Context, uid weibo.UserID) (gen int64, err error) {
	defer weibo.Wrapf(&err, "end the tokens of %s", uid)
	gen, err = s.st.Increment(ctx, &hbase.Increment{Table: tables.Users, Row: tables.UserKey(uid),
		Family: tables.FamInfo, Qualifier: tables.ColTokenGen, Amount: 1})
	if err == nil {
		s.emitTokensEnded(TokensEnded{User: uid, Below: gen})
	}
	return gen, err
}
