package account

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Profile bounds, in user-perceived characters (grapheme clusters, as
// posts count them) and in bytes of UTF-8.
const (
	MaxDisplayNameLength = 30
	MaxDisplayNameBytes  = 256
	MaxBioLength         = 160
	MaxBioBytes          = 1024
)

// The rules of the profile's texts: those of a post's content (valid
// UTF-8, a visible character) with their own bounds; a display name is one
// line.
var (
	displayNameRule = weibo.TextRule{Field: "displayName", MaxChars: MaxDisplayNameLength, MaxBytes: MaxDisplayNameBytes, OneLine: true, Plain: true}
	bioRule         = weibo.TextRule{Field: "bio", MaxChars: MaxBioLength, MaxBytes: MaxBioBytes, Plain: true}
)

// UpdateProfile changes user uid's display name and bio and returns the
// user as stored then. For each: nil leaves it as it is, "" clears it (a
// delete of its cell), anything else replaces it — a display name of 1 to
// 30 characters on one line, a bio of at most 160 characters, each valid
// UTF-8 with a visible character (the rules of a post's content) and
// without bidirectional controls or invisible characters (TextRule.Plain),
// stored in Unicode Normalization Form C (weibo.NormalizeText). Every
// change is one atomic mutation of the users row (MutateRow), so a read
// sees all of it or none. Errors: BAD_USER_INPUT on displayName or bio
// (nothing is written); NOT_FOUND when the user does not exist; the
// store's.
func (s *Service) UpdateProfile(ctx context.Context, uid weibo.UserID, displayName, bio *string) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "update the profile of %s", uid)
	m := &hbase.RowMutation{Table: tables.Users, Row: tables.UserKey(uid)}
	for _, f := range []struct {
		text *string
		rule weibo.TextRule
		col  string
	}{{displayName, displayNameRule, tables.ColDisplayName}, {bio, bioRule, tables.ColBio}} {
		switch {
		case f.text == nil:
		case *f.text == "":
			if m.Delete == nil {
				m.Delete = hbase.Values{tables.FamInfo: {}}
			}
			m.Delete[tables.FamInfo][f.col] = nil
		default:
			text := weibo.NormalizeText(*f.text)
			if err := weibo.ValidateText(f.rule, text); err != nil {
				return nil, err
			}
			if m.Put == nil {
				m.Put = hbase.Values{tables.FamInfo: {}}
			}
			m.Put[tables.FamInfo][f.col] = []byte(text)
		}
	}
	us, err := s.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.NotFound("user %s not found", uid)
	}
	if len(m.Put) == 0 && len(m.Delete) == 0 {
		return us[0], nil
	}
	if err := s.st.MutateRow(ctx, m); err != nil {
		return nil, err
	}
	us, err = s.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	return us[0], nil
}
