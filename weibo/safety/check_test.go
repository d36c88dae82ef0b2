package safety_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestBlockChecks damages the blocks row by row — a block without its
// blocked-by cell, a blocked-by cell without its block, a block written
// behind a follow's back (a follow across it, a blockCount short by one)
// — and checks that fsck reports each kind, that --repair fixes all of
// them through the domain (the follow ended by an unfollow, counters
// exact), and that a second run finds nothing. On HBase the store is a
// namespace of its own, so that fsck sees only this test's rows.
func TestBlockChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			a, x, y := domaintest.MustUser(t, svc, domaintest.Uniq("a")), domaintest.MustUser(t, svc, domaintest.Uniq("x")), domaintest.MustUser(t, svc, domaintest.Uniq("y"))
			if _, err := svc.Safety.Block(ctx, a.ID, x.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Follows.Follow(ctx, a.ID, y.ID); err != nil {
				t.Fatal(err)
			}
			domaintest.FsckRepairs(t, svc, nil)
			put := func(uid weibo.UserID, fam, qual string, v []byte) error {
				return st.Put(ctx, &hbase.Put{Table: tables.Safety, Row: tables.SafetyKey(uid), Values: hbase.Values{fam: {qual: v}}})
			}
			damage := []domaintest.Damage{
				{Kind: safety.IssueReverseMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Safety, Row: tables.SafetyKey(x.ID),
						Values: hbase.Values{tables.FamSafetyBlockedBy: {tables.BlockedByQualifier(a.ID): nil}}})
				}},
				{Kind: safety.IssueReverseStale, Do: func() error { // y never blocked x
					return put(x.ID, tables.FamSafetyBlockedBy, tables.BlockedByQualifier(y.ID), tables.EncodeMillis(1))
				}},
				{Kind: safety.IssueFollow, Do: func() error { // a's block of y written by hand, with its blocked-by cell
					r, err := st.Get(ctx, &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(a.ID)})
					if err != nil {
						return err
					}
					cell := tables.Blocks(r.Value(tables.FamSafetySet, tables.ColBlocks)).With(tables.BlockEntry{UID: y.ID, At: 1})
					if err := put(a.ID, tables.FamSafetySet, tables.ColBlocks, cell); err != nil {
						return err
					}
					return put(y.ID, tables.FamSafetyBlockedBy, tables.BlockedByQualifier(a.ID), tables.EncodeMillis(1))
				}},
				{Kind: safety.IssueCount, Do: func() error { return nil }}, // the same block: a's blockCount is 1, its cell holds 2
			}
			domaintest.FsckRepairs(t, svc, domaintest.Damaged(t, damage))
			us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{a.ID, y.ID})
			if err != nil {
				t.Fatal(err)
			}
			if us[0].BlockCount != 2 || us[0].FollowCount != 0 || us[1].FanCount != 0 {
				t.Fatalf("after the repair: a %+v, y %+v", us[0], us[1])
			}
		})
	}
}
