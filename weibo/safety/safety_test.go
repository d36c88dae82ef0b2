package safety_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestBlocks checks the block on both backends: it is idempotent, counted
// (blockCount) and listed newest first; it ends the follows both ways
// with exact counters; a follow across it is FORBIDDEN either way with
// the same message; it is undone by unblock, after which a follow is
// allowed again; bad arguments are refused with nothing written; and the
// MaxBlocks bound holds.
func TestBlocks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			d := domaintest.Service(t, st)
			a, x, y := domaintest.MustUser(t, d, domaintest.Uniq("a")), domaintest.MustUser(t, d, domaintest.Uniq("x")), domaintest.MustUser(t, d, domaintest.Uniq("y"))
			for _, f := range [][2]weibo.UserID{{a.ID, x.ID}, {x.ID, a.ID}, {a.ID, y.ID}} {
				if _, err := d.Follows.Follow(ctx, f[0], f[1]); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // idempotent
				if _, err := d.Safety.Block(ctx, a.ID, x.ID); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2 * time.Millisecond) // distinct block times: the list's order is the test's
			if _, err := d.Safety.Block(ctx, a.ID, y.ID); err != nil {
				t.Fatal(err)
			}
			users := func(ids ...weibo.UserID) []*weibo.User {
				us, err := d.Accounts.GetUsers(ctx, ids)
				if err != nil {
					t.Fatal(err)
				}
				return us
			}
			us := users(a.ID, x.ID, y.ID)
			if us[0].BlockCount != 2 || us[0].FollowCount != 0 || us[0].FanCount != 0 || us[1].FollowCount != 0 || us[1].FanCount != 0 || us[2].FanCount != 0 {
				t.Fatalf("after the blocks: a %+v, x %+v, y %+v", us[0], us[1], us[2])
			}
			c, err := d.Safety.BlockedUsers(ctx, a.ID, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Edges) != 2 || c.Edges[0].User != y.ID || c.Edges[1].User != x.ID || c.TotalCount != 2 || c.PageInfo.HasNextPage {
				t.Fatalf("blockedUsers: %+v", c)
			}
			one := 1
			c, err = d.Safety.BlockedUsers(ctx, a.ID, &one, c.PageInfo.StartCursor)
			if err != nil || len(c.Edges) != 1 || c.Edges[0].User != x.ID || !c.PageInfo.HasPreviousPage {
				t.Fatalf("blockedUsers after the first: %+v %v", c, err)
			}
			var msgs []string
			for _, f := range [][2]weibo.UserID{{a.ID, x.ID}, {x.ID, a.ID}} {
				_, err := d.Follows.Follow(ctx, f[0], f[1])
				domaintest.WantCode(t, err, weibo.CodeForbidden, "a follow across a block")
				var e *weibo.Error
				errors.As(err, &e)
				msgs = append(msgs, e.Message)
			}
			if msgs[0] != msgs[1] {
				t.Errorf("the two directions' messages differ: %q", msgs)
			}
			set, err := d.Safety.SetOf(ctx, x.ID)
			if err != nil || !set.BlockedBy(a.ID) || set.Blocks(a.ID) || !set.Blocked(a.ID) {
				t.Fatalf("x's set: %v", err)
			}
			for range 2 {
				if _, err := d.Safety.Unblock(ctx, a.ID, x.ID); err != nil {
					t.Fatal(err)
				}
			}
			if set, _ := d.Safety.SetOf(ctx, x.ID); set.Blocked(a.ID) {
				t.Fatal("x still blocked by a after the unblock")
			}
			if _, err := d.Follows.Follow(ctx, x.ID, a.ID); err != nil {
				t.Fatalf("a follow after the unblock: %v", err)
			}
			if us := users(a.ID); us[0].BlockCount != 1 || us[0].FanCount != 1 {
				t.Fatalf("after the unblock and follow: %+v", us[0])
			}
			_, err = d.Safety.Block(ctx, a.ID, a.ID)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a block of oneself")
			_, err = d.Safety.Block(ctx, a.ID, weibo.UserID(987654321987)) // no such user (the demo data holds 1…76,851)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "a block of nobody")

			// The bound: a's cell filled to MaxBlocks by hand.
			var cell tables.Blocks
			for i := range safety.MaxBlocks {
				cell = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(cell, uint64(1e15)+uint64(i)), 1)
			}
			cell = cell.With(tables.BlockEntry{UID: y.ID, At: 1}) // y first (the smallest id), the last entry dropped
			cell = cell[:len(cell)-tables.BlockEntryLen]
			if cell.Len() != safety.MaxBlocks {
				t.Fatalf("filled cell: %d entries", cell.Len())
			}
			if err := st.Put(ctx, &hbase.Put{Table: tables.Safety, Row: tables.SafetyKey(a.ID), Values: hbase.Values{tables.FamSafetySet: {tables.ColBlocks: cell}}}); err != nil {
				t.Fatal(err)
			}
			_, err = d.Safety.Block(ctx, a.ID, x.ID)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a block beyond the bound")
			if _, err := d.Safety.Block(ctx, a.ID, y.ID); err != nil {
				t.Fatalf("a block already made, at the bound: %v", err)
			}
		})
	}
}

// TestMutes checks mutes on both backends: a mute hides from the Set,
// with or without notifications; a timed mute ends by itself when the
// clock passes its end (no job runs), and then neither lists nor counts;
// muting again replaces the mute; unmute is idempotent; the MaxMutes
// bound counts the live mutes only.
func TestMutes(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			var clock domaintest.Clock
			d := domaintest.Service(t, st, clock.Option())
			a, x, y := domaintest.MustUser(t, d, domaintest.Uniq("a")), domaintest.MustUser(t, d, domaintest.Uniq("x")), domaintest.MustUser(t, d, domaintest.Uniq("y"))
			hour := 3600
			if _, err := d.Safety.Mute(ctx, a.ID, x.ID, &hour, false); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Safety.Mute(ctx, a.ID, y.ID, nil, true); err != nil {
				t.Fatal(err)
			}
			set, err := d.Safety.SetOf(ctx, a.ID)
			if err != nil || !set.Mutes(x.ID) || set.MutesNotifications(x.ID) || !set.MutesNotifications(y.ID) || set.Blocked(x.ID) {
				t.Fatalf("a's set after the mutes: %v", err)
			}
			m, err := d.Safety.MutedUsers(ctx, a.ID, nil, nil)
			if err != nil || len(m.Edges) != 2 || m.TotalCount != 2 {
				t.Fatalf("mutedUsers: %+v %v", m, err)
			}
			for _, e := range m.Edges {
				if (e.User == x.ID) != (e.ExpiresAt != nil) {
					t.Errorf("mute of %s ends at %v", e.User, e.ExpiresAt)
				}
			}
			clock.Advance(time.Hour + time.Second)
			if set, _ := d.Safety.SetOf(ctx, a.ID); set.Mutes(x.ID) || !set.Mutes(y.ID) {
				t.Fatal("the timed mute did not end with its hour, or the other ended")
			}
			if m, _ := d.Safety.MutedUsers(ctx, a.ID, nil, nil); len(m.Edges) != 1 || m.Edges[0].User != y.ID {
				t.Fatalf("mutedUsers after the hour: %+v", m)
			}
			if _, err := d.Safety.Mute(ctx, a.ID, y.ID, &hour, false); err != nil { // replaces
				t.Fatal(err)
			}
			if set, _ := d.Safety.SetOf(ctx, a.ID); !set.Mutes(y.ID) || set.MutesNotifications(y.ID) {
				t.Fatal("muting again did not replace the mute")
			}
			for range 2 {
				if _, err := d.Safety.Unmute(ctx, a.ID, y.ID); err != nil {
					t.Fatal(err)
				}
			}
			if set, _ := d.Safety.SetOf(ctx, a.ID); set.Mutes(y.ID) {
				t.Fatal("unmute left the mute")
			}
			zero := 0
			_, err = d.Safety.Mute(ctx, a.ID, x.ID, &zero, true)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a mute of 0 seconds")

			// The bound counts live mutes: MaxMutes live ones refuse a new
			// mute; once they end, it is accepted.
			now := clock.Now().UnixMilli()
			var cell tables.Mutes
			for i := range safety.MaxMutes {
				cell = cell.Put(tables.MuteEntry{UID: weibo.UserID(1e15 + i), At: now, Expires: now + 60_000}, now)
			}
			if err := st.Put(ctx, &hbase.Put{Table: tables.Safety, Row: tables.SafetyKey(a.ID), Values: hbase.Values{tables.FamSafetySet: {tables.ColMutes: cell}}}); err != nil {
				t.Fatal(err)
			}
			_, err = d.Safety.Mute(ctx, a.ID, x.ID, nil, true)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a mute beyond the bound")
			clock.Advance(time.Minute + time.Second)
			if _, err := d.Safety.Mute(ctx, a.ID, x.ID, nil, true); err != nil {
				t.Fatalf("a mute once the others ended: %v", err)
			}
			if m, _ := d.Safety.MutedUsers(ctx, a.ID, nil, nil); m.TotalCount != 1 {
				t.Fatalf("mutedUsers after the ended ones: %d", m.TotalCount)
			}
		})
	}
}

// TestFilters checks keyword filters on both backends: create, list,
// match in their contexts only, end by themselves, delete (idempotent),
// and the bounds.
func TestFilters(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			var clock domaintest.Clock
			d := domaintest.Service(t, b.Open(t), clock.Option())
			a := domaintest.MustUser(t, d, domaintest.Uniq("a"))
			minute := 60
			hide, err := d.Safety.CreateFilter(ctx, a.ID, safety.FilterInput{Phrase: "  剧透 ", Contexts: []safety.Context{safety.ContextHome, safety.ContextTopic}, Action: safety.Hide})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Safety.CreateFilter(ctx, a.ID, safety.FilterInput{Phrase: "Cat", Contexts: []safety.Context{safety.ContextHome}, Action: safety.Warn, WholeWord: true, ExpiresIn: &minute}); err != nil {
				t.Fatal(err)
			}
			fs, err := d.Safety.Filters(ctx, a.ID)
			if err != nil || len(fs) != 2 || fs[0].Phrase != "剧透" || !slices.Equal(fs[0].Contexts, []safety.Context{safety.ContextHome, safety.ContextTopic}) || fs[1].ExpiresAt == nil {
				t.Fatalf("filters: %+v %v", fs, err)
			}
			set, _ := d.Safety.SetOf(ctx, a.ID)
			if h, w := set.Match("今天的剧透来了", safety.ContextHome); !h || w != nil {
				t.Errorf("home match of the hide filter: %v %v", h, w)
			}
			if h, _ := set.Match("今天的剧透来了", safety.ContextComments); h {
				t.Error("the hide filter matched outside its contexts")
			}
			if _, w := set.Match("my CAT sleeps", safety.ContextHome); len(w) != 1 || w[0].Phrase != "Cat" {
				t.Errorf("warn match: %v", w)
			}
			if _, w := set.Match("a catalogue", safety.ContextHome); w != nil {
				t.Errorf("a whole-word filter matched inside a word: %v", w)
			}
			clock.Advance(time.Minute + time.Second)
			if fs, _ := d.Safety.Filters(ctx, a.ID); len(fs) != 1 {
				t.Fatalf("filters after the minute: %+v", fs)
			}
			for i, want := range []bool{true, false} {
				ok, err := d.Safety.DeleteFilter(ctx, a.ID, hide.ID)
				if err != nil || ok != want {
					t.Fatalf("delete %d: %v %v", i, ok, err)
				}
			}
			_, err = d.Safety.DeleteFilter(ctx, a.ID, "nope")
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a malformed filter id")
			long := string(make([]rune, 65))
			for _, in := range []safety.FilterInput{
				{Phrase: " ", Contexts: []safety.Context{safety.ContextHome}, Action: safety.Hide},
				{Phrase: long, Contexts: []safety.Context{safety.ContextHome}, Action: safety.Hide},
				{Phrase: "x", Action: safety.Hide},
				{Phrase: "x", Contexts: []safety.Context{safety.ContextHome}},
			} {
				_, err := d.Safety.CreateFilter(ctx, a.ID, in)
				domaintest.WantCode(t, err, weibo.CodeBadUserInput, "a bad filter")
			}
			for i := range safety.MaxFilters {
				if _, err := d.Safety.CreateFilter(ctx, a.ID, safety.FilterInput{Phrase: string(rune('a' + i%26)), Contexts: []safety.Context{safety.ContextHome}, Action: safety.Warn}); err != nil {
					t.Fatalf("filter %d: %v", i, err)
				}
			}
			_, err = d.Safety.CreateFilter(ctx, a.ID, safety.FilterInput{Phrase: "one more", Contexts: []safety.Context{safety.ContextHome}, Action: safety.Warn})
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "the 101st filter")
		})
	}
}
