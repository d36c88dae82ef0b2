package safety

import (
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The blocks' part of `gateway fsck` (package check):
//
//	pair     authority                        dependents
//	block    a's block cell holding b (s:b)   b's blocked-by cell of a (r:<a>), no follow a → b
//	                                          or b → a, a's blockCount (c:bk)
//
// One scan of weibo:safety reads every row; the follows across blocks are
// one GetMany of the attends rows of the blocked pairs; the blockCounts
// come from fsck's one scan of weibo:users (Run.User). A block without its
// blocked-by cell (IssueReverseMissing), a blocked-by cell without its
// block (IssueReverseStale) and a follow across a block (IssueFollow) are
// settled (RepairBlock, the repairer's own settle); a blockCount off its
// cell (IssueCount) is recounted; a malformed packed cell
// (IssueMalformed) is reported.

// Kinds of check.Issue of the blocks.
const (
	IssueReverseMissing = "block-reverse-missing" // a block without the blocked user's blocked-by cell: settled (written)
	IssueReverseStale   = "block-reverse-stale"   // a blocked-by cell without its block: settled (deleted)
	IssueFollow         = "block-follow"          // a follow across a standing block: settled (unfollowed)
	IssueCount          = "user-block-count"      // a blockCount off the entries of the block cell: recounted
	IssueMalformed      = "safety-malformed"      // a packed cell that does not decode: reported
)

type blockPair struct{ a, b weibo.UserID }

type checkRun struct {
	s      *Service
	p      *check.Pass
	counts map[weibo.UserID]int64 // users with a blockCount cell
	cts    map[weibo.UserID]int64 // its newest cell time
}

// fsckCheck is the blocks' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		c := &checkRun{s: s, p: p, counts: map[weibo.UserID]int64{}, cts: map[weibo.UserID]int64{}}
		return check.Run{User: c.user, Check: c.check}
	}}
}

// user keeps a user's blockCount, where the row has one.
func (c *checkRun) user(uid weibo.UserID, r *hbase.Result) {
	if cell := r.Cell(tables.FamCount, tables.ColBlockCount); cell != nil {
		c.counts[uid] = tables.CounterValue(r, tables.ColBlockCount)
		c.cts[uid] = cell.Timestamp
	}
}

func (c *checkRun) check(ctx context.Context) error {
	blocks := map[blockPair]int64{}     // standing blocks -> the block cell's time
	reverse := map[blockPair]int64{}    // blocked-by cells (a blocks b) -> the cell's time
	entries := map[weibo.UserID]int64{} // users -> entries of their block cell
	ets := map[weibo.UserID]int64{}
	var malformed []weibo.UserID
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.Safety}, func(r *hbase.Result) {
		owner, ok := tables.DecodeSafetyKey(r.Row)
		if !ok {
			return
		}
		if cell := r.Cell(tables.FamSafetySet, tables.ColBlocks); cell != nil {
			b := tables.Blocks(cell.Value)
			if !b.Valid() {
				malformed = append(malformed, owner)
			} else {
				for i := range b.Len() {
					blocks[blockPair{owner, b.At(i).UID}] = cell.Timestamp
				}
				entries[owner] = int64(b.Len())
				ets[owner] = cell.Timestamp
			}
		}
		if m := r.Value(tables.FamSafetySet, tables.ColMutes); m != nil && !tables.Mutes(m).Valid() {
			malformed = append(malformed, owner)
		}
		if f := r.Value(tables.FamSafetySet, tables.ColFilters); f != nil {
			if _, ok := tables.DecodeFilters(f); !ok {
				malformed = append(malformed, owner)
			}
		}
		for _, cell := range r.Family(tables.FamSafetyBlockedBy) {
			if by, ok := tables.DecodeBlockedByQualifier(cell.Qualifier); ok {
				reverse[blockPair{by, owner}] = cell.Timestamp
			}
		}
	})
	if err != nil {
		return err
	}
	for _, u := range malformed {
		if err := c.p.Issue(IssueMalformed, 0, nil, "user %s's safety row holds a malformed packed cell", u); err != nil {
			return err
		}
	}
	cmpPair := func(x, y blockPair) int {
		if x.a != y.a {
			return compareUID(x.a, y.a)
		}
		return compareUID(x.b, y.b)
	}
	for _, pr := range slices.SortedFunc(maps.Keys(blocks), cmpPair) {
		if _, ok := reverse[pr]; ok {
			continue
		}
		if err := c.p.Issue(IssueReverseMissing, blocks[pr], func() (bool, error) {
			return true, c.s.RepairBlock(ctx, pr.a, pr.b)
		}, "user %s blocks %s without the blocked-by cell", pr.a, pr.b); err != nil {
			return err
		}
	}
	for _, pr := range slices.SortedFunc(maps.Keys(reverse), cmpPair) {
		if _, ok := blocks[pr]; ok {
			continue
		}
		if err := c.p.Issue(IssueReverseStale, reverse[pr], func() (bool, error) {
			return true, c.s.RepairBlock(ctx, pr.a, pr.b)
		}, "user %s has a blocked-by cell of %s without the block", pr.b, pr.a); err != nil {
			return err
		}
	}
	if err := c.follows(ctx, slices.SortedFunc(maps.Keys(blocks), cmpPair), blocks); err != nil {
		return err
	}
	users := map[weibo.UserID]bool{}
	for u := range c.counts {
		users[u] = true
	}
	for u := range entries {
		users[u] = true
	}
	for _, u := range slices.SortedFunc(maps.Keys(users), compareUID) {
		if c.counts[u] == entries[u] {
			continue
		}
		fix := c.s.w.RecountOne(ctx, counted.Counter{Kind: BlockCount, Owner: uint64(u)})
		if err := c.p.Issue(IssueCount, max(c.cts[u], ets[u]), fix, "user %s has blockCount %d, blocks %d users", u, c.counts[u], entries[u]); err != nil {
			return err
		}
	}
	return nil
}

// follows reports the follows across standing blocks: the attends rows
// a → b and b → a of every block, read in GetMany batches.
func (c *checkRun) follows(ctx context.Context, pairs []blockPair, blocks map[blockPair]int64) error {
	for chunk := range slices.Chunk(pairs, 500) {
		gets := make([]*hbase.Get, 0, 2*len(chunk))
		for _, pr := range chunk {
			gets = append(gets, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(pr.a, tables.Attends, pr.b)},
				&hbase.Get{Table: tables.Relations, Row: tables.RelationKey(pr.b, tables.Attends, pr.a)})
		}
		rs, err := c.p.Store().GetMany(ctx, gets)
		if err != nil {
			return err
		}
		for i, pr := range chunk {
			if !rs[2*i].Exists() && !rs[2*i+1].Exists() {
				continue
			}
			ts := max(blocks[pr], check.NewestTS(rs[2*i]), check.NewestTS(rs[2*i+1]))
			if err := c.p.Issue(IssueFollow, ts, func() (bool, error) {
				return true, c.s.RepairBlock(ctx, pr.a, pr.b)
			}, "a follow between %s and %s across %s's block", pr.a, pr.b, pr.a); err != nil {
				return err
			}
		}
	}
	return nil
}

func compareUID(a, b weibo.UserID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
