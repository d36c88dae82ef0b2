package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Context is where a keyword filter applies (GraphQL FilterContext).
type Context byte

// Filter contexts.
const (
	ContextHome          = Context(tables.FilterHome)
	ContextNotifications = Context(tables.FilterNotifications)
	ContextTopic         = Context(tables.FilterTopic)
	ContextComments      = Context(tables.FilterComments)
)

// Action is what a matching filter does (GraphQL FilterAction).
type Action byte

// Filter actions.
const (
	// Hide drops the matching post from the filter's contexts.
	Hide = Action(tables.FilterHide)
	// Warn keeps it, with Post.filtered naming the filter.
	Warn = Action(tables.FilterWarn)
)

// FilterResult is one filter a post matched (GraphQL FilterResult).
type FilterResult struct {
	Phrase string
	Action Action
}

// RowGet is the Get of uid's safety row: a read path adds it to the
// batched read it makes anyway (a page's GetMany), so that reading the
// viewer's Set costs no store call of its own.
func RowGet(uid weibo.UserID) *hbase.Get {
	return &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(uid)}
}

// Set is a viewer's blocks (both ways), mutes and keyword filters at one
// moment, decoded from their safety row (RowGet). A nil *Set hides
// nothing (an anonymous viewer). It is safe for concurrent reads.
//
// Decoding costs no allocation per block or mute: the packed cells are
// searched in place (O(log n) per user).
type Set struct {
	owner     weibo.UserID
	now       int64 // ms: mutes and filters expired at now are none
	blocks    tables.Blocks
	mutes     tables.Mutes
	blockedBy map[weibo.UserID]bool
	filters   []filter
}

// filter is a live filter with its folded phrase.
type filter struct {
	tables.FilterEntry
	folded string
	latin  bool // wholeWord applies (a phrase of Latin letters and digits at its ends)
}

// FromRow decodes owner's Set from their safety row r (nil or empty: no
// blocks, mutes or filters) at now (ms). Malformed cells count as empty.
func FromRow(owner weibo.UserID, r *hbase.Result, now int64) *Set {
	s := &Set{owner: owner, now: now}
	if !r.Exists() {
		return s
	}
	if b := tables.Blocks(r.Value(tables.FamSafetySet, tables.ColBlocks)); b.Valid() {
		s.blocks = b
	}
	if m := tables.Mutes(r.Value(tables.FamSafetySet, tables.ColMutes)); m.Valid() {
		s.mutes = m
	}
	for _, c := range r.Family(tables.FamSafetyBlockedBy) {
		if uid, ok := tables.DecodeBlockedByQualifier(c.Qualifier); ok {
			if s.blockedBy == nil {
				s.blockedBy = map[weibo.UserID]bool{}
			}
			s.blockedBy[uid] = true
		}
	}
	if v := r.Value(tables.FamSafetySet, tables.ColFilters); v != nil {
		fs, _ := tables.DecodeFilters(v)
		for _, f := range fs {
			if f.Expires != 0 && f.Expires <= now {
				continue
			}
			s.filters = append(s.filters, compile(f))
		}
	}
	return s
}

func compile(f tables.FilterEntry) filter {
	first, _ := utf8.DecodeRuneInString(f.Phrase)
	last, _ := utf8.DecodeLastRuneInString(f.Phrase)
	latin := func(r rune) bool { return unicode.Is(unicode.Latin, r) || unicode.IsDigit(r) }
	return filter{FilterEntry: f, folded: Fold(f.Phrase), latin: latin(first) && latin(last)}
}

// Fold is the Unicode case folding filters match with.
func Fold(s string) string { return cases.Fold().String(s) }

// Owner is the viewer the Set belongs to.
func (s *Set) Owner() weibo.UserID {
	if s == nil {
		return 0
	}
	return s.owner
}

// Blocks reports whether the viewer blocks uid.
func (s *Set) Blocks(uid weibo.UserID) bool {
	if s == nil {
		return false
	}
	_, ok := s.blocks.Find(uid)
	return ok
}

// BlockedBy reports whether uid blocks the viewer.
func (s *Set) BlockedBy(uid weibo.UserID) bool { return s != nil && s.blockedBy[uid] }

// Blocked reports whether a block stands between the viewer and uid,
// either way.
func (s *Set) Blocked(uid weibo.UserID) bool { return s.Blocks(uid) || s.BlockedBy(uid) }

// Mutes reports whether the viewer mutes uid (a mute live at the Set's
// moment).
func (s *Set) Mutes(uid weibo.UserID) bool {
	if s == nil {
		return false
	}
	e, ok := s.mutes.Find(uid)
	return ok && e.Live(s.now)
}

// MutesNotifications reports whether the viewer mutes uid's
// notifications (a live mute made with notifications: true).
func (s *Set) MutesNotifications(uid weibo.UserID) bool {
	if s == nil {
		return false
	}
	e, ok := s.mutes.Find(uid)
	return ok && e.Live(s.now) && e.Notifications
}

// HidesAuthor reports whether posts by uid leave the viewer's home
// timeline and its live events: blocked either way, or muted.
func (s *Set) HidesAuthor(uid weibo.UserID) bool { return s.Blocked(uid) || s.Mutes(uid) }

// HidesPost reports whether the post id (by its author), a repost of
// root (nil for an original post), leaves the viewer's home timeline:
// either author blocked either way or muted.
func (s *Set) HidesPost(id weibo.PostID, root *weibo.PostID) bool {
	if s == nil {
		return false
	}
	return s.HidesAuthor(id.Author) || (root != nil && s.HidesAuthor(root.Author))
}

// BlocksPost reports whether the post id, a repost of root (nil for an
// original), is out of the viewer's sight for a block either way (topic
// pages, notifications, comments: mutes do not hide there).
func (s *Set) BlocksPost(id weibo.PostID, root *weibo.PostID) bool {
	if s == nil {
		return false
	}
	return s.Blocked(id.Author) || (root != nil && s.Blocked(root.Author))
}

// HasFilters reports whether any live filter applies to ctx.
func (s *Set) HasFilters(ctx Context) bool {
	if s == nil {
		return false
	}
	for i := range s.filters {
		if s.filters[i].Contexts&byte(ctx) != 0 {
			return true
		}
	}
	return false
}

// Match returns the viewer's live filters of ctx that text matches: hide
// is true when one of them hides, warn lists the warning ones (nil when
// none). Matching is on Unicode case-folded text; a wholeWord filter
// whose phrase begins and ends with Latin letters or digits matches only
// where no letter or digit adjoins it (Chinese text has no such
// boundaries: there a phrase matches anywhere).
func (s *Set) Match(text string, ctx Context) (hide bool, warn []FilterResult) {
	if !s.HasFilters(ctx) {
		return false, nil
	}
	folded := Fold(text)
	for i := range s.filters {
		f := &s.filters[i]
		if f.Contexts&byte(ctx) == 0 || !f.matches(folded) {
			continue
		}
		if Action(f.Action) == Hide {
			hide = true
		} else {
			warn = append(warn, FilterResult{Phrase: f.Phrase, Action: Warn})
		}
	}
	return hide, warn
}

// matches reports whether folded text holds f's phrase.
func (f *filter) matches(folded string) bool {
	if f.folded == "" {
		return false
	}
	if !f.WholeWord || !f.latin {
		return strings.Contains(folded, f.folded)
	}
	for off := 0; ; {
		i := strings.Index(folded[off:], f.folded)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(f.folded)
		before, _ := utf8.DecodeLastRuneInString(folded[:i])
		after, _ := utf8.DecodeRuneInString(folded[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		off = i + 1
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
