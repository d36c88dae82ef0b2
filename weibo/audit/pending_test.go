package audit_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestPendingEvents runs a change's pending event through every state a
// gateway killed at any point of the change can leave it in, on both
// backends, and resolves it as the repairer does: a change whose commit
// write carried (or deleted) the event's proof cell is listed exactly
// once — by time, by target and by action, and by id —, one that did not
// commit is never listed and leaves no pending row or proof cell behind.
// Before the resolve no pending event is listed or found by id.
// Repeated changes of one authority row (two events on one user's row,
// one committed, one not) are each decided by their own proof, and a
// resolver that read a pending event before another resolved it decides
// alike.
func TestPendingEvents(t *testing.T) {
	type state int
	const (
		recorded  state = iota // killed right after Begin, before the commit
		committed              // killed right after the commit write
		listed                 // killed right after the event row (audit:visible)
		unarmed                // a deleting proof killed before it was armed
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := ownStore(t, b)
			clk := &clock{t: at(0)}
			log := audit.New(st, clk.now)
			uid := weibo.UserID(100000001)
			row := tables.UserKey(uid)
			qual := tables.RoleQualifier(7)
			if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: row, Values: hbase.Values{tables.FamOrg: {qual: tables.EncodePriority(3)}}}); err != nil {
				t.Fatal(err)
			}
			type kase struct {
				name    string
				deleted bool // the commit deletes the proof cell
				state   state
				visible bool // after the resolve
			}
			cases := []kase{
				{"written proof, killed before the commit", false, recorded, false},
				{"written proof, killed after the commit", false, committed, true},
				{"written proof, killed after the event row", false, listed, true},
				{"deleted proof, killed before the commit", true, recorded, false},
				{"deleted proof, killed after the commit", true, committed, true},
				{"deleted proof, killed after the event row", true, listed, true},
				{"deleted proof, killed before it was armed", true, unarmed, false},
			}
			var pending []*audit.PendingEvent
			var events []*audit.Event
			for i, c := range cases {
				clk.t = at(i + 1)
				e := &audit.Event{Action: "role.assign", Target: user(uid), After: `{"case":` + string(rune('0'+i)) + `}`}
				p, err := log.Begin(ctx, e, audit.Proof{Table: tables.Users, Row: row, Family: tables.FamOrg, Deleted: c.deleted})
				if err != nil {
					t.Fatalf("%s: begin: %v", c.name, err)
				}
				if p.Armed != c.deleted {
					t.Fatalf("%s: armed %v", c.name, p.Armed)
				}
				fam, q, v := p.Cell()
				switch c.state {
				case committed, listed:
					if c.deleted {
						err = st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: nil}}})
					} else {
						err = st.Put(ctx, &hbase.Put{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: v}}})
					}
					if err == nil && c.state == listed {
						err = log.Settle(ctx, p, func(ctx context.Context) error { return errKilled })
						if errors.Is(err, errKilled) {
							err = nil
						}
					}
				case unarmed:
					// As Begin leaves it killed between its pending row and
					// the arming: neither the mark nor the cell.
					err = st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: audit.PendingKey(p.Entry.ID), Values: hbase.Values{tables.FamAudit: {audit.ColProofArmed: nil}}})
					if err == nil {
						err = st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: nil}}})
					}
				}
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				pending, events = append(pending, p), append(events, e)
			}
			all := audit.Filter{}
			byTarget := audit.Filter{Target: new(user(uid))}
			byAction := audit.Filter{Action: "role.assign"}
			idsOf := func(want func(i int) bool) []string {
				var ids []string
				for i := len(events) - 1; i >= 0; i-- {
					if want(i) {
						ids = append(ids, events[i].ID)
					}
				}
				return ids
			}
			// Before the resolve: listed only the events whose settle wrote
			// their event row.
			wantNow := idsOf(func(i int) bool { return cases[i].state == listed })
			for _, f := range []audit.Filter{all, byTarget, byAction} {
				if got := list(t, log, f, 3); !slices.Equal(got, wantNow) {
					t.Errorf("before the resolve, %+v lists %q, want %q", f, got, wantNow)
				}
			}
			got, err := log.PendingEvents(ctx, at(4).UnixMilli())
			if err != nil || len(got) != 3 || got[0].Entry.ID != pending[0].Entry.ID {
				t.Fatalf("pending before the 4th event: %d, %v", len(got), err)
			}
			// The resolve, twice: the second finds nothing.
			vis, del, err := log.ResolvePending(ctx, math.MaxInt64)
			if err != nil || vis != 4 || del != 3 {
				t.Fatalf("resolve: %d visible, %d deleted, %v; want 4, 3", vis, del, err)
			}
			if vis, del, err := log.ResolvePending(ctx, math.MaxInt64); err != nil || vis+del != 0 {
				t.Fatalf("second resolve: %d visible, %d deleted, %v", vis, del, err)
			}
			want := idsOf(func(i int) bool { return cases[i].visible })
			for _, f := range []audit.Filter{all, byTarget, byAction} {
				if got := list(t, log, f, 2); !slices.Equal(got, want) {
					t.Errorf("after the resolve, %+v lists %q, want %q", f, got, want)
				}
			}
			ids := make([]string, len(events))
			for i, e := range events {
				ids[i] = e.ID
			}
			byID, err := log.Get(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range byID {
				if (e != nil) != cases[i].visible {
					t.Errorf("%s: found by id %v, want %v", cases[i].name, e != nil, cases[i].visible)
				}
			}
			// Nothing left behind: no pending row, no proof cell; the role
			// cell untouched.
			left, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Audit, Prefix: []byte{byte(audit.Pending)}})
			if err != nil || len(left) != 0 {
				t.Errorf("pending rows left: %d, %v", len(left), err)
			}
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: row, Families: []string{tables.FamOrg}})
			if err != nil {
				t.Fatal(err)
			}
			if cells := r.Family(tables.FamOrg); len(cells) != 1 || cells[0].Qualifier != qual {
				t.Errorf("authority row after the resolve: %d cells, want the role cell alone", len(cells))
			}

			// Two resolvers at once: one has disarmed the pending row and
			// deleted its proof cell (abandoning it) when the other, from
			// its older scan, still takes it for armed. The other reads it
			// again and does not list it.
			clk.t = at(20)
			e := &audit.Event{Action: "role.revoke", Target: user(uid)}
			p, err := log.Begin(ctx, e, audit.Proof{Table: tables.Users, Row: row, Family: tables.FamOrg, Deleted: true})
			if err != nil {
				t.Fatal(err)
			}
			fam, q, _ := p.Cell()
			if err := st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: audit.PendingKey(p.Entry.ID), Values: hbase.Values{tables.FamAudit: {audit.ColProofArmed: nil}}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, &hbase.Delete{Table: tables.Users, Row: row, Values: hbase.Values{fam: {q: nil}}}); err != nil {
				t.Fatal(err)
			}
			if listed, err := log.Resolve(ctx, p); err != nil || listed || !p.Armed {
				t.Fatalf("a stale armed event resolved: listed %v, %v", listed, err)
			}
			if got, err := log.Get(ctx, []string{e.ID}); err != nil || got[0] != nil {
				t.Errorf("the abandoned event found by id: %v", err)
			}
			if left, err := log.PendingEvents(ctx, math.MaxInt64); err != nil || len(left) != 0 {
				t.Errorf("pending events left: %d, %v", len(left), err)
			}
		})
	}
}

// errKilled stops a settle at its step, as a killed gateway would.
var errKilled = errors.New("killed")
