package audit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/tables"
)

// ownStore returns a migrated store holding nothing but this test's rows:
// a fresh embedded store, or on the real HBase a namespace of its own
// (dropped at the end), so that the listing of every event sees only
// this test's events.
func ownStore(t *testing.T, b testenv.Backend) hbase.StoreAdmin {
	t.Helper()
	st := b.Open(t)
	if b.Name == hbase.BackendHBase {
		ns := fmt.Sprintf("audit_%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
		st = hbase.WithNamespace(st, tables.Namespace, ns)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_ = st.DropNamespace(ctx, tables.Namespace)
		})
	}
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

// clock is the log's clock, set by the test before each Record.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// base is the time of the fixture's first event; every event is 0.3 ms
// past a whole millisecond, which At drops.
var base = time.Date(2026, 3, 1, 12, 0, 0, 300_000, time.UTC)

// at returns base plus i seconds.
func at(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }

func user(id weibo.UserID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeUser, User: id} }
func role(id weibo.RoleID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeRole, Role: id} }
func dept(id weibo.DeptID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeDepartment, Dept: id} }

// fixture records the test's events: three actors and none, targets of
// every kind and none, three actions, two events in one millisecond, and
// forty events of actor 9 of which only the oldest is a "role.delete"
// (a filter that matches little). It returns them in the order recorded.
func fixture(t *testing.T, log *audit.Log, clk *clock) []*audit.Event {
	t.Helper()
	actions := []string{"role.assign", "role.revoke", "department.move"}
	targets := []weibo.NodeID{role(3), user(10), dept(2), {}}
	var out []*audit.Event
	record := func(i int, e *audit.Event) {
		clk.t = at(i)
		if err := log.Record(t.Context(), e); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		out = append(out, e)
	}
	for i := range 24 {
		record(i, &audit.Event{Actor: weibo.UserID(i % 4) /* 0: none */, Action: actions[i%3], Target: targets[i%4],
			Before: fmt.Sprintf(`{"n": %d}`, i), After: fmt.Sprintf(`{"n": %d}`, i+1), RequestID: fmt.Sprintf("req-%d", i)})
	}
	record(10, &audit.Event{Actor: 1, Action: "role.assign", Target: role(3)}) // the same ms as event 10
	record(30, &audit.Event{Actor: 9, Action: "role.delete", Target: role(4)})
	for i := range 40 {
		record(31+i, &audit.Event{Actor: 9, Action: "role.create", Target: role(weibo.RoleID(100 + i))})
	}
	return out
}

// expect returns the ids of the events of evs that f selects, newest
// first (ties by nonce: the order of their event rowkeys).
func expect(evs []*audit.Event, f audit.Filter) []string {
	var keep []*audit.Event
	for _, e := range evs {
		if (f.Actor == nil || e.Actor == *f.Actor) && (f.Target == nil || e.Target == *f.Target) &&
			(f.Action == "" || e.Action == f.Action) && (f.Since == nil || !e.At.Before(*f.Since)) &&
			(f.Until == nil || e.At.Before(*f.Until)) {
			keep = append(keep, e)
		}
	}
	slices.SortFunc(keep, func(a, b *audit.Event) int { return bytes.Compare(rowOf(a), rowOf(b)) })
	ids := []string{}
	for _, e := range keep {
		ids = append(ids, e.ID)
	}
	return ids
}

func rowOf(e *audit.Event) []byte {
	id, err := audit.ParseEventID(e.ID)
	if err != nil {
		panic(err)
	}
	return audit.EventKey(id)
}

// list pages through f first at a time and returns the ids listed,
// failing on a repeat or a page without a way on.
func list(t *testing.T, log *audit.Log, f audit.Filter, first int) []string {
	t.Helper()
	ids := []string{}
	seen := map[string]bool{}
	var after *string
	for page := 0; ; page++ {
		if page > 500 {
			t.Fatal("paging does not end")
		}
		c, err := log.Page(t.Context(), f, &first, after)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(c.Edges) > first {
			t.Fatalf("page %d: %d edges, first %d", page, len(c.Edges), first)
		}
		for _, e := range c.Edges {
			if seen[e.Event.ID] {
				t.Fatalf("page %d repeats %s", page, e.Event.ID)
			}
			seen[e.Event.ID] = true
			ids = append(ids, e.Event.ID)
		}
		if !c.PageInfo.HasNextPage {
			return ids
		}
		if c.PageInfo.EndCursor == nil {
			t.Fatalf("page %d: hasNextPage without an end cursor", page)
		}
		after = c.PageInfo.EndCursor
	}
}

func TestAuditLog(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := ownStore(t, b)
			clk := &clock{}
			log := audit.New(st, clk.now)
			evs := fixture(t, log, clk)

			// What Record filled in.
			e0 := evs[0]
			if !e0.At.Equal(base.Truncate(time.Millisecond)) || !strings.HasPrefix(e0.ID, fmt.Sprintf("audit:%d_", base.UnixMilli())) {
				t.Errorf("event 0: id %s at %v", e0.ID, e0.At)
			}
			if e0.Before != `{"n":0}` || e0.After != `{"n":1}` {
				t.Errorf("JSON not compacted: %s %s", e0.Before, e0.After)
			}
			got, err := log.Get(ctx, []string{evs[5].ID, "audit:1_0000000000000001", evs[7].ID})
			if err != nil {
				t.Fatal(err)
			}
			if got[1] != nil || got[0] == nil || *got[0] != *evs[5] || got[2] == nil || *got[2] != *evs[7] {
				t.Errorf("Get = %v %v %v", got[0], got[1], got[2])
			}

			// A half-written event: its index rows without its event row.
			half := &audit.Entry{ID: audit.EventID{Millis: at(12).UnixMilli(), Nonce: 7}, Actor: 1, Action: "role.assign", Target: role(3)}
			var puts []*hbase.Put
			for _, k := range audit.IndexKeys(half) {
				puts = append(puts, &hbase.Put{Table: tables.Audit, Row: k, Values: audit.Values(half)})
			}
			if err := st.PutMany(ctx, puts); err != nil {
				t.Fatal(err)
			}

			one, three, nine := weibo.UserID(1), weibo.UserID(3), weibo.UserID(9)
			r3, u10, d2 := role(3), user(10), dept(2)
			t5, t20, t10 := at(5), at(20), at(10)
			t10a, t10b := t10.Add(-800*time.Microsecond), t10.Add(200*time.Microsecond) // half a ms either side of event 10's whole ms
			filters := []struct {
				name string
				f    audit.Filter
			}{
				{"all", audit.Filter{}},
				{"actor", audit.Filter{Actor: &one}},
				{"actor with few events", audit.Filter{Actor: &three}},
				{"target role", audit.Filter{Target: &r3}},
				{"target user", audit.Filter{Target: &u10}},
				{"target department", audit.Filter{Target: &d2}},
				{"action", audit.Filter{Action: "role.revoke"}},
				{"actor and action", audit.Filter{Actor: &one, Action: "role.assign"}},
				{"target and actor", audit.Filter{Target: &r3, Actor: &one}},
				{"action matching little of the actor's", audit.Filter{Actor: &nine, Action: "role.delete"}},
				{"window", audit.Filter{Since: &t5, Until: &t20}},
				{"since", audit.Filter{Since: &t20}},
				{"until", audit.Filter{Until: &t5}},
				{"window of one ms", audit.Filter{Since: &t10a, Until: &t10b}},
				{"actor in a window", audit.Filter{Actor: &one, Since: &t5, Until: &t20}},
				{"action in a window", audit.Filter{Action: "department.move", Since: &t5}},
				{"nothing", audit.Filter{Action: "no.such"}},
			}
			for _, c := range filters {
				want := expect(evs, c.f)
				for _, first := range []int{1, 7, 100} {
					if got := list(t, log, c.f, first); !slices.Equal(got, want) {
						t.Errorf("%s, first %d: listed %d events %v\nwant %d %v", c.name, first, len(got), got, len(want), want)
					}
				}
			}
			if n := len(expect(evs, audit.Filter{Since: &t10a, Until: &t10b})); n != 2 {
				t.Errorf("the window of one ms holds %d events, want the 2 of that ms", n)
			}
			// The filter matching little fills no first page: the page
			// ends at the rows it read, with a way on.
			first := 1
			c, err := log.Page(ctx, audit.Filter{Actor: &nine, Action: "role.delete"}, &first, nil)
			if err != nil || len(c.Edges) != 0 || !c.PageInfo.HasNextPage || c.PageInfo.EndCursor == nil {
				t.Errorf("a page of a filter matching little: %v %+v", err, c)
			}

			// Remove: the event leaves every listing, and again is a no-op.
			gone := evs[8] // no actor, target role 3, department.move
			if err := log.Remove(ctx, &audit.Event{ID: gone.ID}); err != nil {
				t.Fatal(err)
			}
			if err := log.Remove(ctx, gone); err != nil {
				t.Fatal(err)
			}
			evs = slices.DeleteFunc(evs, func(e *audit.Event) bool { return e == gone })
			for _, c := range filters {
				if got, want := list(t, log, c.f, 100), expect(evs, c.f); !slices.Equal(got, want) {
					t.Errorf("after Remove, %s: %v, want %v", c.name, got, want)
				}
			}
			if got, err := log.Get(ctx, []string{gone.ID}); err != nil || got[0] != nil {
				t.Errorf("removed event read back: %v %v", got, err)
			}
			rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Audit})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if _, e, ok := audit.DecodeRow(r); ok && e.ID.String() == gone.ID {
					t.Errorf("row %q of the removed event is left", r.Row)
				}
			}
		})
	}
}

// TestSource checks that Record takes who acts from the context where the
// event does not say.
func TestSource(t *testing.T) {
	if a, r := audit.Source(t.Context()); a != 0 || r != "" {
		t.Errorf("Source of a bare context = %d, %q", a, r)
	}
	ctx := audit.WithSource(t.Context(), 42, "req-42")
	if a, r := audit.Source(ctx); a != 42 || r != "req-42" {
		t.Errorf("Source = %d, %q", a, r)
	}
	log := audit.New(ownStore(t, testenv.Backends()[0]), nil)
	e := &audit.Event{Action: "role.create", Target: role(1)}
	if err := log.Record(ctx, e); err != nil {
		t.Fatal(err)
	}
	own := &audit.Event{Actor: 7, RequestID: "own", Action: "role.create"}
	if err := log.Record(ctx, own); err != nil {
		t.Fatal(err)
	}
	got, err := log.Get(t.Context(), []string{e.ID, own.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Actor != 42 || got[0].RequestID != "req-42" || got[1].Actor != 7 || got[1].RequestID != "own" {
		t.Errorf("stored %+v and %+v", got[0], got[1])
	}
	if time.Since(got[0].At) > time.Minute {
		t.Errorf("At %v: New(st, nil) does not use the clock", got[0].At)
	}
}

// TestClient checks that Record takes the provisioning client from the
// context (Begin's pending path makes its entry the same way), stores
// it, and leaves the actor empty.
func TestClient(t *testing.T) {
	if c := audit.ClientOf(t.Context()); c != "" {
		t.Errorf("ClientOf a bare context = %q", c)
	}
	ctx := audit.WithClient(audit.WithSource(t.Context(), 0, "req-scim"), "okta")
	log := audit.New(ownStore(t, testenv.Backends()[0]), nil)
	e := &audit.Event{Action: "user.provision", Target: weibo.NodeID{Kind: weibo.NodeUser, User: 9}}
	if err := log.Record(ctx, e); err != nil {
		t.Fatal(err)
	}
	plain := &audit.Event{Action: "role.create", Target: role(2)}
	if err := log.Record(t.Context(), plain); err != nil {
		t.Fatal(err)
	}
	got, err := log.Get(t.Context(), []string{e.ID, plain.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Client != "okta" || got[0].Actor != 0 || got[0].RequestID != "req-scim" || got[1].Client != "" {
		t.Errorf("stored %+v and %+v", got[0], got[1])
	}
}

// TestBadInput checks the BAD_USER_INPUT errors of Record, Page, Get and
// Remove, and the field each names.
func TestBadInput(t *testing.T) {
	ctx := t.Context()
	st := ownStore(t, testenv.Backends()[0])
	log := audit.New(st, nil)
	e := &audit.Event{Actor: 1, Action: "role.assign", Target: role(3)}
	if err := log.Record(ctx, e); err != nil {
		t.Fatal(err)
	}
	actor1, actor2, zero := weibo.UserID(1), weibo.UserID(2), weibo.UserID(0)
	post := weibo.NodeID{Kind: weibo.NodePost, Post: weibo.PostID{Author: 1, Millis: 5}}
	role0 := role(0)
	now := time.Now()
	later := now.Add(time.Second)
	page := func(f audit.Filter, first int, after *string) error {
		_, err := log.Page(ctx, f, &first, after)
		return err
	}
	cursorOf := func(f audit.Filter) *string {
		first := 1
		c, err := log.Page(ctx, f, &first, nil)
		if err != nil || len(c.Edges) != 1 {
			t.Fatalf("page of %+v: %v", f, err)
		}
		return &c.Edges[0].Cursor
	}
	all, byActor, byAction := cursorOf(audit.Filter{}), cursorOf(audit.Filter{Actor: &actor1}), cursorOf(audit.Filter{Action: "role.assign"})
	malformed := "not a cursor"
	for _, c := range []struct {
		name, field string
		err         error
	}{
		{"record without action", "action", log.Record(ctx, &audit.Event{})},
		{"record action with a space", "action", log.Record(ctx, &audit.Event{Action: "role assign"})},
		{"record action of 65 bytes", "action", log.Record(ctx, &audit.Event{Action: strings.Repeat("a", 65)})},
		{"record post target", "target", log.Record(ctx, &audit.Event{Action: "x", Target: post})},
		{"record role 0", "target", log.Record(ctx, &audit.Event{Action: "x", Target: role0})},
		{"record bad before", "before", log.Record(ctx, &audit.Event{Action: "x", Before: "{"})},
		{"record bad after", "after", log.Record(ctx, &audit.Event{Action: "x", After: "nope"})},
		{"page actor 0", "actor", page(audit.Filter{Actor: &zero}, 1, nil)},
		{"page post target", "target", page(audit.Filter{Target: &post}, 1, nil)},
		{"page bad action", "action", page(audit.Filter{Action: "a b"}, 1, nil)},
		{"page since = until", "until", page(audit.Filter{Since: &now, Until: &now}, 1, nil)},
		{"page since > until", "until", page(audit.Filter{Since: &later, Until: &now}, 1, nil)},
		{"page first 0", "first", page(audit.Filter{}, 0, nil)},
		{"page first 101", "first", page(audit.Filter{}, 101, nil)},
		{"page malformed cursor", "after", page(audit.Filter{}, 1, &malformed)},
		{"all-events cursor by actor", "after", page(audit.Filter{Actor: &actor1}, 1, all)},
		{"actor cursor of another actor", "after", page(audit.Filter{Actor: &actor2}, 1, byActor)},
		{"actor cursor by action", "after", page(audit.Filter{Action: "role.assign"}, 1, byActor)},
		{"action cursor of another action", "after", page(audit.Filter{Action: "role.revoke"}, 1, byAction)},
		{"action cursor for all", "after", page(audit.Filter{}, 1, byAction)},
		{"get malformed id", "ids", func() error { _, err := log.Get(ctx, []string{e.ID, "audit:x"}); return err }()},
		{"remove malformed id", "id", log.Remove(ctx, &audit.Event{ID: "role:1"})},
	} {
		if we, ok := errors.AsType[*weibo.Error](c.err); !ok || we.Code != weibo.CodeBadUserInput || we.Field != c.field {
			t.Errorf("%s: %v, want BAD_USER_INPUT on %s", c.name, c.err, c.field)
		}
	}
	// A cursor of the same listing with other criteria checked in memory,
	// or another window, is accepted.
	for _, f := range []audit.Filter{{Actor: &actor1, Action: "role.revoke"}, {Actor: &actor1, Since: &now}} {
		if err := page(f, 1, byActor); err != nil {
			t.Errorf("%+v with the actor's cursor: %v", f, err)
		}
	}
	// Nothing invalid was written.
	if got := list(t, log, audit.Filter{}, 100); !slices.Equal(got, []string{e.ID}) {
		t.Errorf("events %v, want only %s", got, e.ID)
	}
}
