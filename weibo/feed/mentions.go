package feed

import (
	"context"
	"slices"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Mentions (@username) in a post, a repost's comment or a comment. They
// are resolved once, when the text is written, and stored with it
// (tables.ColMentions: the users' ids and usernames), so that reading a
// post or a comment reads its mentions with it: a page selecting
// `mentions { username }` costs no store call more.
//
// A mention is an '@' followed by the longest run of username characters
// (ASCII letters, digits and '_', as registration allows), when:
//   - the run is 1 to 32 characters (a longer run is no username: the
//     whole of it is text);
//   - the '@' does not follow a username character or one of ". + -":
//     "alice@example.com" and "a.b@c" are e-mail addresses, not mentions;
//     anything else may come before it — space, punctuation, Chinese text
//     ("你好@alice" mentions alice), another '@';
//   - a username with that name exists (ignoring case); otherwise the
//     text is plain text.
//
// Whatever follows the run ends it: "@alice，你好", "@alice的", "(@alice)"
// and "@alice." all mention alice. The full-width '＠' is not an '@'. Each
// user counts once per text, in the order of first mention, and at most
// MaxMentions distinct names are looked up (the first ones).

// MaxMentions is the most distinct usernames one text may mention; later
// ones are plain text.
const MaxMentions = 20

// maxUsernameLen is the longest username registration allows.
const maxUsernameLen = 32

// isUsernameByte reports whether c may be part of a username.
func isUsernameByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// MentionedNames returns the usernames text mentions (see above), lower
// case, distinct, in order of first mention, at most MaxMentions; it
// neither reads nor checks that they exist.
func MentionedNames(text string) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < MaxMentions; i++ {
		if text[i] != '@' {
			continue
		}
		if i > 0 {
			if p := text[i-1]; isUsernameByte(p) || p == '.' || p == '+' || p == '-' {
				continue
			}
		}
		j := i + 1
		for j < len(text) && isUsernameByte(text[j]) {
			j++
		}
		if n := j - i - 1; n >= 1 && n <= maxUsernameLen {
			name := strings.ToLower(text[i+1 : j])
			if !contains(out, name) {
				out = append(out, name)
			}
		}
		i = j - 1
	}
	return out
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// ResolveMentions returns the existing users text mentions, in order: one
// GetMany of the usernames index, one of the users rows found (none when
// the text mentions nobody). Errors are the store's.
func (s *Service) ResolveMentions(ctx context.Context, text string) ([]tables.Mention, error) {
	names := MentionedNames(text)
	if len(names) == 0 {
		return nil, nil
	}
	gets := make([]*hbase.Get, len(names))
	for i, n := range names {
		gets[i] = &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(n)}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	var ids []weibo.UserID
	for _, r := range rs {
		if uid := tables.UsernameUser(r); uid != 0 && !containsID(ids, uid) {
			ids = append(ids, uid)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	us, err := s.users.GetUsers(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []tables.Mention
	for _, u := range us {
		// A usernames row may be a provisioned user's login name: a
		// mention names a username only.
		if u != nil && slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, u.Username) }) {
			out = append(out, tables.Mention{User: u.ID, Name: u.Username})
		}
	}
	return out, nil
}

func containsID(ids []weibo.UserID, id weibo.UserID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// MentionUsers turns stored mentions into users (id and username only:
// Complete is false, the rest is read when asked for).
func MentionUsers(ms []tables.Mention) []*weibo.User {
	out := make([]*weibo.User, len(ms))
	for i, m := range ms {
		out[i] = &weibo.User{ID: m.User, Username: m.Name}
	}
	return out
}
