package safety

import (
	"bytes"
	"context"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// VersionGet is the Get of uid's safety row's version cell alone
// (tables.ColSafetyVersion): a page that remembers the viewer's Set adds
// it to its batched read instead of RowGet, and reads a few bytes rather
// than the viewer's blocks and mutes (16 and 25 bytes an entry).
func VersionGet(uid weibo.UserID) *hbase.Get {
	return &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(uid), Families: []string{tables.FamSafetyVersion}}
}

// DefaultRemembered is how many viewers' Sets a Service remembers.
const DefaultRemembered = 4096

// sets remembers decoded Sets by viewer, each with the version of the
// row it was decoded from: every change of a safety row writes a new
// version in the same atomic mutation (tables.ColSafetyVersion), so a
// remembered Set whose version the row still holds is the row's Set,
// whichever gateway instance wrote the change. Bounded (LRU); safe for
// concurrent use.
type sets struct {
	mu  sync.Mutex
	lru *simplelru.LRU[weibo.UserID, *setEntry]
}

// setEntry is a remembered Set: the row it was decoded from (to decode it
// again once a timed mute or filter ends) and that end.
type setEntry struct {
	version []byte
	row     *hbase.Result
	set     *Set
	ends    int64 // Unix ms; 0: none
}

func newSets(n int) *sets {
	l, _ := simplelru.NewLRU[weibo.UserID, *setEntry](max(1, n), nil)
	return &sets{lru: l}
}

// lookup returns owner's remembered Set at now when version is still its
// row's.
func (c *sets) lookup(owner weibo.UserID, version []byte, now int64) (*Set, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(owner)
	if !ok || !bytes.Equal(e.version, version) {
		return nil, false
	}
	if e.ends != 0 && now >= e.ends {
		// A timed mute or filter ended: decode the row again.
		e.set = FromRow(owner, e.row, now)
		e.ends = e.set.nextEnd()
	}
	return e.set, true
}

// remember keeps owner's Set decoded from row (read whole, with its
// version) and returns it.
func (c *sets) remember(owner weibo.UserID, row *hbase.Result, now int64) *Set {
	set := FromRow(owner, row, now)
	e := &setEntry{version: row.Value(tables.FamSafetyVersion, tables.ColSafetyVersion), row: row, set: set, ends: set.nextEnd()}
	c.mu.Lock()
	c.lru.Add(owner, e)
	c.mu.Unlock()
	return set
}

// SetForVersion returns viewer's Set given r, the result of
// VersionGet(viewer) the caller read in its own batched read: the Set the
// service remembers when the row still holds its version (no read), none
// when the row has no version (a row without it holds nothing), else the
// Set read with one Get of the whole row, remembered. So a page costs one
// store call more only when the viewer's Set changed since this instance
// last read it. Errors are the store's.
func (s *Service) SetForVersion(ctx context.Context, viewer weibo.UserID, r *hbase.Result) (_ *Set, err error) {
	now := s.w.NowMillis()
	v := r.Value(tables.FamSafetyVersion, tables.ColSafetyVersion)
	if v == nil {
		return &Set{owner: viewer, now: now}, nil
	}
	if set, ok := s.sets.lookup(viewer, v, now); ok {
		return set, nil
	}
	defer weibo.Wrap(&err, "safety set")
	row, err := s.st.Get(ctx, RowGet(viewer))
	if err != nil {
		return nil, err
	}
	return s.sets.remember(viewer, row, now), nil
}

// has reports whether owner's Set is remembered (whatever its version).
func (c *sets) has(owner weibo.UserID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(owner)
}

// refresh reads owner's row again after this instance changed it and
// remembers its Set — always for the user who made the change (who reads
// their pages next), else only when remembered already — so that a page
// after a change made here costs no Get more; a change made on another
// instance costs the reader's next page one. An error leaves the old
// entry, which the version no longer matches.
func (s *Service) refresh(ctx context.Context, owner weibo.UserID, always bool) {
	if !always && !s.sets.has(owner) {
		return
	}
	row, err := s.st.Get(ctx, RowGet(owner))
	if err != nil {
		return
	}
	s.sets.remember(owner, row, s.w.NowMillis())
}
