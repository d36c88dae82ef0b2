package safety

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// BlockEdge is one user of blockedUsers.
type BlockEdge struct {
	User      weibo.UserID
	BlockedAt time.Time
	Cursor    string
}

// BlockConnection is a page of blockedUsers, newest block first.
type BlockConnection struct {
	Edges      []BlockEdge
	PageInfo   weibo.PageInfo
	TotalCount int64 // the viewer's blockCount (kept counter)
}

// MuteEdge is one user of mutedUsers.
type MuteEdge struct {
	User          weibo.UserID
	MutedAt       time.Time
	ExpiresAt     *time.Time // nil: until unmuted
	Notifications bool
	Cursor        string
}

// MuteConnection is a page of mutedUsers, newest mute first.
type MuteConnection struct {
	Edges      []MuteEdge
	PageInfo   weibo.PageInfo
	TotalCount int // the live mutes
}

// listed is one entry of a packed cell in list order.
type listed struct {
	uid weibo.UserID
	at  int64
	i   int // the entry's index in its cell
}

// listKey is an entry's position: rev(at)(8) | uid(8), newest first.
func (l listed) key() []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(math.MaxInt64-l.at))
	return binary.BigEndian.AppendUint64(k, uint64(l.uid))
}

// pageOf sorts entries newest first and cuts the page after the cursor.
func pageOf(entries []listed, kind paging.CursorKind, first *int, after *string) ([]listed, []string, weibo.PageInfo, error) {
	n, err := paging.Size(first)
	if err != nil {
		return nil, nil, weibo.PageInfo{}, err
	}
	from, err := paging.DecodeCursor(after, kind, 16, 16)
	if err != nil {
		return nil, nil, weibo.PageInfo{}, err
	}
	slices.SortFunc(entries, func(a, b listed) int {
		return cmp.Or(cmp.Compare(b.at, a.at), cmp.Compare(a.uid, b.uid))
	})
	start := 0
	if from != nil {
		start, _ = slices.BinarySearchFunc(entries, from, func(e listed, k []byte) int { return slices.Compare(e.key(), k) })
		if start < len(entries) && slices.Equal(entries[start].key(), from) {
			start++
		}
	}
	info := weibo.PageInfo{HasPreviousPage: start > 0}
	end := min(len(entries), start+n)
	info.HasNextPage = end < len(entries)
	page := entries[start:end]
	cursors := make([]string, len(page))
	for i, e := range page {
		cursors[i] = paging.EncodeCursor(kind, e.key())
	}
	if len(page) > 0 {
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[len(cursors)-1]
	}
	return page, cursors, info, nil
}

// BlockedUsers pages through the users viewer blocks, newest block
// first: one Get of viewer's block cell (at most MaxBlocks entries,
// sorted in memory), totalCount from viewer's blockCount. Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) BlockedUsers(ctx context.Context, viewer weibo.UserID, first *int, after *string) (_ *BlockConnection, err error) {
	defer weibo.Wrap(&err, "blocked users")
	cell, err := s.readCell(ctx, viewer, tables.ColBlocks)
	if err != nil {
		return nil, err
	}
	b := tables.Blocks(cell)
	if !b.Valid() {
		b = nil
	}
	entries := make([]listed, b.Len())
	for i := range entries {
		e := b.At(i)
		entries[i] = listed{uid: e.UID, at: e.At, i: i}
	}
	page, cursors, info, err := pageOf(entries, paging.CursorBlocks, first, after)
	if err != nil {
		return nil, err
	}
	c := &BlockConnection{Edges: make([]BlockEdge, len(page)), PageInfo: info}
	for i, e := range page {
		c.Edges[i] = BlockEdge{User: e.uid, BlockedAt: time.UnixMilli(e.at), Cursor: cursors[i]}
	}
	us, err := s.users.GetUsers(ctx, []weibo.UserID{viewer})
	if err != nil {
		return nil, err
	}
	if us[0] != nil {
		c.TotalCount = us[0].BlockCount
	}
	return c, nil
}

// MutedUsers pages through the users viewer mutes, newest mute first,
// each with its end: one Get of viewer's mute cell (at most MaxMutes live
// entries, sorted in memory); ended mutes are not listed. Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) MutedUsers(ctx context.Context, viewer weibo.UserID, first *int, after *string) (_ *MuteConnection, err error) {
	defer weibo.Wrap(&err, "muted users")
	cell, err := s.readCell(ctx, viewer, tables.ColMutes)
	if err != nil {
		return nil, err
	}
	m := tables.Mutes(cell)
	if !m.Valid() {
		m = nil
	}
	now := s.w.NowMillis()
	var entries []listed
	for i := range m.Len() {
		if e := m.At(i); e.Live(now) {
			entries = append(entries, listed{uid: e.UID, at: e.At, i: i})
		}
	}
	page, cursors, info, err := pageOf(entries, paging.CursorMutes, first, after)
	if err != nil {
		return nil, err
	}
	c := &MuteConnection{Edges: make([]MuteEdge, len(page)), PageInfo: info, TotalCount: len(entries)}
	for i, l := range page {
		e := m.At(l.i)
		c.Edges[i] = MuteEdge{User: e.UID, MutedAt: time.UnixMilli(e.At), Notifications: e.Notifications, Cursor: cursors[i]}
		if e.Expires != 0 {
			t := time.UnixMilli(e.Expires)
			c.Edges[i].ExpiresAt = &t
		}
	}
	return c, nil
}
