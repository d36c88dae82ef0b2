package safety

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Filter is one of a viewer's keyword filters (GraphQL Filter).
type Filter struct {
	// ID is the filter's id (16 hex digits), unique among its owner's.
	ID string
	// Phrase is the text matched, as given.
	Phrase string
	// Contexts are where it applies.
	Contexts []Context
	// Action is what a match does.
	Action Action
	// WholeWord: a Latin phrase matches only as a whole word.
	WholeWord bool
	// CreatedAt is when it was made.
	CreatedAt time.Time
	// ExpiresAt is when it ends, nil for never.
	ExpiresAt *time.Time
}

// FilterInput is createFilter's arguments.
type FilterInput struct {
	Phrase    string
	Contexts  []Context
	Action    Action
	WholeWord bool
	// ExpiresIn is the filter's lifetime in seconds, nil for never.
	ExpiresIn *int
}

// AllContexts are the filter contexts in their GraphQL order.
var AllContexts = []Context{ContextHome, ContextNotifications, ContextTopic, ContextComments}

func filterOf(e tables.FilterEntry) *Filter {
	f := &Filter{ID: filterID(e.ID), Phrase: e.Phrase, Action: Action(e.Action), WholeWord: e.WholeWord, CreatedAt: time.UnixMilli(e.At)}
	for _, c := range AllContexts {
		if e.Contexts&byte(c) != 0 {
			f.Contexts = append(f.Contexts, c)
		}
	}
	if e.Expires != 0 {
		t := time.UnixMilli(e.Expires)
		f.ExpiresAt = &t
	}
	return f
}

func filterID(id uint64) string { return strconv.FormatUint(id|1<<63, 16) }

func parseFilterID(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 16, 64)
	return v &^ (1 << 63), err == nil && v&(1<<63) != 0
}

// CreateFilter adds a keyword filter of viewer's and returns it: one
// CheckAndPut of viewer's filter cell. The phrase is 1…MaxPhrase
// characters after trimming spaces; contexts are at least one. Errors:
// BAD_USER_INPUT for a bad phrase, no context, an unknown action, an
// expiresIn not in 1…MaxDuration, or MaxFilters live filters already.
func (s *Service) CreateFilter(ctx context.Context, viewer weibo.UserID, in FilterInput) (_ *Filter, err error) {
	defer weibo.Wrap(&err, "create filter")
	phrase := strings.TrimSpace(in.Phrase)
	if n := utf8.RuneCountInString(phrase); n < 1 || n > MaxPhrase || len(phrase) > 255 || !utf8.ValidString(phrase) {
		return nil, weibo.BadInput("phrase", "a filter's phrase is 1 to %d characters", MaxPhrase)
	}
	var contexts byte
	for _, c := range in.Contexts {
		contexts |= byte(c)
	}
	if contexts == 0 {
		return nil, weibo.BadInput("context", "a filter needs at least one context")
	}
	if in.Action != Hide && in.Action != Warn {
		return nil, weibo.BadInput("action", "a filter's action is HIDE or WARN")
	}
	if in.ExpiresIn != nil && (*in.ExpiresIn < 1 || *in.ExpiresIn > MaxDuration) {
		return nil, weibo.BadInput("expiresIn", "expiresIn must be between 1 and %d seconds, or null for never", MaxDuration)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	var made tables.FilterEntry
	_, err = s.update(ctx, viewer, tables.ColFilters, func(cur []byte) ([]byte, bool, error) {
		now := s.w.NowMillis()
		fs, _ := tables.DecodeFilters(cur)
		fs = slices.DeleteFunc(fs, func(f tables.FilterEntry) bool { return f.Expires != 0 && f.Expires <= now })
		if len(fs) >= MaxFilters {
			return nil, false, weibo.BadInput("phrase", "you have %d filters already, the most one user may", MaxFilters)
		}
		made = tables.FilterEntry{ID: binary.BigEndian.Uint64(rnd[:]) &^ (1 << 63), At: now, Action: byte(in.Action), Contexts: contexts,
			WholeWord: in.WholeWord, Phrase: phrase}
		if in.ExpiresIn != nil {
			made.Expires = now + int64(*in.ExpiresIn)*time.Second.Milliseconds()
		}
		return tables.EncodeFilters(append(fs, made)), true, nil
	})
	if err != nil {
		return nil, err
	}
	s.emitChange(viewer)
	return filterOf(made), nil
}

// DeleteFilter deletes viewer's filter id and reports whether it existed
// (idempotent). Errors: BAD_USER_INPUT for a malformed id.
func (s *Service) DeleteFilter(ctx context.Context, viewer weibo.UserID, id string) (_ bool, err error) {
	defer weibo.Wrap(&err, "delete filter")
	fid, ok := parseFilterID(id)
	if !ok {
		return false, weibo.BadInput("id", "not a filter id")
	}
	found := false
	_, err = s.update(ctx, viewer, tables.ColFilters, func(cur []byte) ([]byte, bool, error) {
		now := s.w.NowMillis()
		fs, _ := tables.DecodeFilters(cur)
		n := len(fs)
		fs = slices.DeleteFunc(fs, func(f tables.FilterEntry) bool { return f.ID == fid })
		found = len(fs) < n
		fs = slices.DeleteFunc(fs, func(f tables.FilterEntry) bool { return f.Expires != 0 && f.Expires <= now })
		return tables.EncodeFilters(fs), found, nil
	})
	if err != nil {
		return false, err
	}
	if found {
		s.emitChange(viewer)
	}
	return found, nil
}

// Filters returns viewer's live filters in creation order: one Get.
func (s *Service) Filters(ctx context.Context, viewer weibo.UserID) (_ []*Filter, err error) {
	defer weibo.Wrap(&err, "filters")
	cur, err := s.readCell(ctx, viewer, tables.ColFilters)
	if err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	fs, _ := tables.DecodeFilters(cur)
	out := []*Filter{}
	for _, f := range fs {
		if f.Expires == 0 || f.Expires > now {
			out = append(out, filterOf(f))
		}
	}
	return out, nil
}
