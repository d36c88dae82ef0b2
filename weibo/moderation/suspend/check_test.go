package suspend_test

import (
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSuspensionChecks suspends a user, checks that fsck finds nothing,
// then damages weibo:suspensions one kind at a time — a rowkey that is no
// user's, an until cell of 3 bytes, a suspension of a user who does not
// exist, an audit proof cell without its pending event — and checks that
// fsck reports each (only the proof cell repaired, deleted: fsck does not
// guess a moderator's intent), that the registry counts the malformed row
// as no suspension, and that once the damage is gone fsck is clean again.
// On HBase the store is a namespace of its own.
func TestSuspensionChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			bob := domaintest.MustUser(t, svc, domaintest.Uniq("bob"))
			eve := domaintest.MustUser(t, svc, domaintest.Uniq("eve"))
			if _, err := svc.Suspensions.Suspend(ctx, bob.ID, nil, "a reason"); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Suspensions.Suspend(ctx, eve.ID, nil, ""); err != nil {
				t.Fatal(err)
			}
			run := func() map[string]int {
				t.Helper()
				rep, err := fsck.Run(ctx, svc, fsck.Options{Repair: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, is := range rep.Issues {
					if is.Repaired != (is.Kind == suspend.IssueProofStale) {
						t.Errorf("repaired %+v", is)
					}
				}
				return rep.Counts()
			}
			if c := run(); len(c) != 0 {
				t.Fatalf("fsck of sound suspensions: %v", c)
			}
			ghost := weibo.UserID(999_999_999)
			badKey := []byte("\x00nokey")
			fam := tables.FamSuspension
			put := func(row []byte, v hbase.Values) {
				t.Helper()
				if err := st.Put(ctx, &hbase.Put{Table: tables.Suspensions, Row: row, Values: v}); err != nil {
					t.Fatal(err)
				}
			}
			put(badKey, tables.EncodeSuspension(tables.SuspensionCells{Since: 1}))
			put(tables.SuspensionKey(eve.ID), hbase.Values{fam: {tables.ColSuspendedUntil: []byte{1, 2, 3}}})
			put(tables.SuspensionKey(ghost), tables.EncodeSuspension(tables.SuspensionCells{Since: 1}))
			stale := audit.ProofQualifier(audit.EventID{Millis: 1, Nonce: 7})
			if err := st.Put(ctx, &hbase.Put{Table: tables.Suspensions, Row: tables.SuspensionKey(bob.ID), Timestamp: 1,
				Values: hbase.Values{fam: {stale: []byte("debris")}}}); err != nil {
				t.Fatal(err)
			}
			c := run()
			want := map[string]int{suspend.IssueBadKey: 1, suspend.IssueMalformed: 1, suspend.IssueNoUser: 1, suspend.IssueProofStale: 1}
			for k, n := range want {
				if c[k] != n {
					t.Errorf("%d %s issues, want %d (all: %v)", c[k], k, n, c)
				}
			}
			reg := suspend.NewRegistry(st, nil, nil, 0)
			if err := reg.Load(ctx); err != nil {
				t.Fatal(err)
			}
			if now := svc.Writes.NowMillis(); !reg.Suspended(bob.ID, now) || reg.Suspended(eve.ID, now) {
				t.Errorf("registry: bob suspended %v (want true), eve with a malformed row %v (want false)", reg.Suspended(bob.ID, now), reg.Suspended(eve.ID, now))
			}
			for _, row := range [][]byte{badKey, tables.SuspensionKey(ghost)} {
				if err := st.Delete(ctx, &hbase.Delete{Table: tables.Suspensions, Row: row}); err != nil {
					t.Fatal(err)
				}
			}
			if err := svc.Suspensions.Unsuspend(ctx, eve.ID); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, &hbase.Delete{Table: tables.Suspensions, Row: tables.SuspensionKey(eve.ID)}); err != nil {
				t.Fatal(err)
			}
			if c := run(); len(c) != 0 {
				t.Fatalf("fsck once the damage is gone: %v", c)
			}
		})
	}
}
