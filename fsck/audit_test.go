package fsck_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestAuditChecks damages the audit log — a half-written event (its index
// rows only), a half-removed one (its event row gone), an unreadable row,
// an index row lost and one whose copy differs from its event — and checks
// that the reads skip what they must, that fsck reports each (the stale
// index rows pending while younger than the grace), that --repair fixes
// them and that a second run finds nothing. On HBase the store is a
// namespace of its own, so that fsck sees only this test's rows.
func TestAuditChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "fsck_audit")
			svc, _ := orgService(t, st)
			// Old events first, more rows than one chunk of the check.
			recent := time.Now().Add(-time.Minute)
			stamp := time.Now().Add(-2 * time.Hour)
			log := audit.New(st, func() time.Time { return stamp })
			const fillers = 130
			for i := range fillers {
				e := &audit.Event{Actor: 7, Action: "role.create", Target: weibo.NodeID{Kind: weibo.NodeRole, Role: weibo.RoleID(100 + i)}}
				if err := log.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			stamp = time.Now()
			role3 := weibo.NodeID{Kind: weibo.NodeRole, Role: 3}
			e1 := &audit.Event{Actor: 5, Action: "role.assign", Target: role3, After: `{"priority":9}`}
			e2 := &audit.Event{Action: "seed.load"}
			e3 := &audit.Event{Actor: 6, Action: "department.move", Target: weibo.NodeID{Kind: weibo.NodeDepartment, Dept: 2}, Before: `{"parent":1}`}
			for _, e := range []*audit.Event{e1, e2, e3} {
				stamp = stamp.Add(time.Millisecond) // newest first is e3, e2, e1
				if err := log.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			org := fsck.Options{Areas: fsck.AreaOrg}
			if rep, err := fsck.Run(ctx, svc, org); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			} else if rep.Rows[tables.Audit] != 4*fillers+4+2+4 {
				t.Errorf("read %d rows of %s, want %d (each event's row and its index rows)", rep.Rows[tables.Audit], tables.Audit, 4*fillers+10)
			}

			entry := func(e *audit.Event) *audit.Entry {
				id, err := audit.ParseEventID(e.ID)
				if err != nil {
					t.Fatal(err)
				}
				return &audit.Entry{ID: id, Actor: e.Actor, Action: e.Action, Target: e.Target, Before: e.Before, After: e.After}
			}
			put := func(key []byte, e *audit.Entry) {
				t.Helper()
				if err := st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: key, Values: audit.Values(e)}); err != nil {
					t.Fatal(err)
				}
			}
			del := func(key []byte) {
				t.Helper()
				if err := st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key}); err != nil {
					t.Fatal(err)
				}
			}
			// A Record that died before its event row: three index rows.
			half := &audit.Entry{ID: audit.EventID{Millis: time.Now().Add(-time.Hour).UnixMilli(), Nonce: 1},
				Actor: 5, Action: "role.assign", Target: role3}
			for _, k := range audit.IndexKeys(half) {
				put(k, half)
			}
			// A Remove that died after the event row: e2's action row.
			del(audit.EventKey(entry(e2).ID))
			// A row no event can list.
			put([]byte("x junk"), half)
			// e1's actor row lost; e3's action row holding another copy.
			del(audit.IndexKeys(entry(e1))[0])
			other := *entry(e3)
			other.Before = `{"parent":7}`
			put(audit.IndexKeys(entry(e3))[2], &other)

			// Reads skip the index rows without an event.
			listed := func(f audit.Filter) []string {
				t.Helper()
				f.Since = &recent // not the fillers
				c, err := log.Page(ctx, f, new(100), nil)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, e := range c.Edges {
					ids = append(ids, e.Event.ID)
				}
				return ids
			}
			actor5 := weibo.UserID(5)
			for _, c := range []struct {
				f    audit.Filter
				want []string
			}{
				{audit.Filter{}, []string{e3.ID, e1.ID}},
				{audit.Filter{Target: &role3}, []string{e1.ID}},
				{audit.Filter{Action: "role.assign"}, []string{e1.ID}},
				{audit.Filter{Action: "seed.load"}, nil},
				{audit.Filter{Actor: &actor5}, nil}, // e1's actor row is lost, the half event's has no event
			} {
				if got := listed(c.f); !slices.Equal(got, c.want) {
					t.Errorf("%+v lists %v, want %v", c.f, got, c.want)
				}
			}

			// With a grace of an hour the stale rows (written just now)
			// are pending and left alone; the missing ones are repaired.
			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg, Repair: true, Grace: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			counts := rep.Counts()
			if counts[fsck.AuditIndexStale] != 5 || counts[fsck.AuditIndexMissing] != 2 || len(rep.Issues) != 7 {
				t.Fatalf("issues %v, want 5 %s and 2 %s: %+v", counts, fsck.AuditIndexStale, fsck.AuditIndexMissing, rep.Issues)
			}
			for _, is := range rep.Issues {
				if is.Kind == fsck.AuditIndexStale && (!is.Pending || is.Repaired) || is.Kind == fsck.AuditIndexMissing && !is.Repaired {
					t.Errorf("with a grace: %+v", is)
				}
			}
			for _, w := range []struct{ kind, about string }{
				{fsck.AuditIndexStale, "actor index row (user 5) of " + half.ID.String()},
				{fsck.AuditIndexStale, "target index row (r 3) of " + half.ID.String()},
				{fsck.AuditIndexStale, "action index row (role.assign) of " + half.ID.String()},
				{fsck.AuditIndexStale, "action index row (seed.load) of " + e2.ID},
				{fsck.AuditIndexStale, `audit row "x junk"`},
				{fsck.AuditIndexMissing, "actor index row (user 5) of " + e1.ID},
				{fsck.AuditIndexMissing, "action index row (department.move) of " + e3.ID},
			} {
				if len(issuesAbout(rep, w.kind, w.about)) != 1 {
					t.Errorf("no %s issue about %q in %+v", w.kind, w.about, rep.Issues)
				}
			}
			if got := listed(audit.Filter{Actor: &actor5}); !slices.Equal(got, []string{e1.ID}) {
				t.Errorf("after the repair e1's actor lists %v", got)
			}
			if got, err := log.Get(ctx, []string{e3.ID}); err != nil || got[0].Before != e3.Before {
				t.Errorf("e3: %v %+v", err, got)
			}
			if got, _ := log.Page(ctx, audit.Filter{Action: "department.move"}, nil, nil); len(got.Edges) != 1 || got.Edges[0].Event.Before != e3.Before {
				t.Errorf("e3 by action: %+v", got.Edges)
			}

			// Without a grace the stale rows go too, and all is clean.
			rep, err = fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg, Repair: true})
			if err != nil {
				t.Fatal(err)
			}
			if counts := rep.Counts(); counts[fsck.AuditIndexStale] != 5 || len(rep.Issues) != 5 || rep.Unrepaired() != 0 {
				t.Fatalf("without a grace: %v, %d unrepaired: %+v", counts, rep.Unrepaired(), rep.Issues)
			}
			if rep, err := fsck.Run(ctx, svc, org); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("after the repair: %v %+v", err, rep)
			} else if rep.Rows[tables.Audit] != 4*fillers+4+4 {
				t.Errorf("%d rows left, want the fillers', e1's and e3's 4 each", rep.Rows[tables.Audit])
			}
			if got := listed(audit.Filter{}); !slices.Equal(got, []string{e3.ID, e1.ID}) {
				t.Errorf("after the repair the log lists %v", got)
			}
		})
	}
}

// TestAuditPendingChecks leaves pending audit events as changes killed
// before and after their commit point leave them — a written proof and a
// deleted one, each committed and not —, a pending row that does not
// decode and proof cells without their pending event (in a user's row and
// a role's), and checks that fsck reports each (audit-pending,
// audit-proof-stale; pending itself while younger than the grace, and
// then left alone), that --repair lists exactly the committed events and
// deletes the others with their proof cells, and the orphan cells, and
// that a second run finds nothing. No pending
// event is listed before the repair.
func TestAuditPendingChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "fsck_auditp")
			svc, _ := orgService(t, st)
			log := audit.New(st, nil)
			uid := weibo.UserID(100000001)
			row := tables.UserKey(uid)
			target := weibo.NodeID{Kind: weibo.NodeUser, User: uid}
			var events []*audit.Event
			for i, c := range []struct{ deleted, commit bool }{{false, true}, {false, false}, {true, true}, {true, false}} {
				e := &audit.Event{Actor: 5, Action: "role.assign", Target: target, After: fmt.Sprintf(`{"case":%d}`, i)}
				p, err := log.Begin(ctx, e, audit.Proof{Table: tables.Users, Row: row, Family: tables.FamOrg, Deleted: c.deleted})
				if err != nil {
					t.Fatal(err)
				}
				if c.commit { // the change's commit write, with the proof
					fam, q, v := p.Cell()
					if c.deleted {
						err = st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: nil}}})
					} else {
						err = st.Put(ctx, &hbase.Put{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: v}}})
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				events = append(events, e)
			}
			// Proof cells whose pending event is gone: in the user's row and
			// in a role's.
			orphan := audit.ProofQualifier(audit.EventID{Millis: time.Now().UnixMilli(), Nonce: 7})
			for _, p := range []*hbase.Put{
				{Table: tables.Users, Row: row, Values: hbase.Values{tables.FamOrg: {orphan: []byte("x")}}},
				{Table: tables.Roles, Row: tables.RoleKey(99), Values: hbase.Values{tables.FamInfo: {orphan: []byte("x")}}},
			} {
				if err := st.Put(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			junk := audit.PendingKey(audit.EventID{Millis: time.Now().UnixMilli(), Nonce: 9})
			if err := st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: junk, Values: hbase.Values{tables.FamAudit: {audit.ColAction: []byte("no proof")}}}); err != nil {
				t.Fatal(err)
			}
			listed := func() []string {
				t.Helper()
				c, err := log.Page(ctx, audit.Filter{Target: &target}, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, e := range c.Edges {
					ids = append(ids, e.Event.ID)
				}
				return ids
			}
			if got := listed(); len(got) != 0 {
				t.Fatalf("pending events listed: %v", got)
			}

			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg, Repair: true, Grace: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Counts(); c[fsck.AuditPending] != 5 || c[fsck.AuditProofStale] != 2 || len(rep.Issues) != 7 {
				t.Fatalf("with a grace: %v, want 5 %s and 2 %s: %+v", c, fsck.AuditPending, fsck.AuditProofStale, rep.Issues)
			}
			for _, is := range rep.Issues {
				if !is.Pending || is.Repaired {
					t.Errorf("with a grace: %+v", is)
				}
			}
			for _, e := range events {
				if len(issuesAbout(rep, fsck.AuditPending, "pending audit event "+e.ID+" (role.assign of "+target.String()+")")) != 1 {
					t.Errorf("no %s issue about %s: %+v", fsck.AuditPending, e.ID, rep.Issues)
				}
			}

			rep, err = fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg, Repair: true})
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Counts(); c[fsck.AuditPending] != 5 || c[fsck.AuditProofStale] != 2 || len(rep.Issues) != 7 || rep.Unrepaired() != 0 {
				t.Fatalf("without a grace: %v, %d unrepaired: %+v", c, rep.Unrepaired(), rep.Issues)
			}
			if got, want := listed(), []string{events[2].ID, events[0].ID}; !slices.Equal(got, want) {
				t.Errorf("after the repair the user's log lists %v, want the committed %v", got, want)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("after the repair: %v %+v", err, rep)
			}
			for _, g := range []*hbase.Get{{Table: tables.Users, Row: row}, {Table: tables.Roles, Row: tables.RoleKey(99)}} {
				r, err := st.Get(ctx, g)
				if err != nil || r.Exists() {
					t.Errorf("proof cells left in a row of %s: %d, %v", g.Table, len(r.Cells), err)
				}
			}
		})
	}
}
