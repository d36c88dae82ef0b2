package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/safety"
)

// timelineSafetyWarn is the one filter of timelineSafetyLoad that
// matches posts of the home timeline (most Chinese ones): it warns.
const timelineSafetyWarn = "的"

// timelineSafetyLoad gives viewer, through the safety service, blocks of
// n users, mutes of n others and 20 keyword filters that hide nothing of
// the home timelines of the data set's users far: the users blocked and
// muted (the data set's, lowest ids first) are none of far, and neither
// follow nor are followed by them; the HIDE phrases occur in no post, and
// the one filter that matches many posts (timelineSafetyWarn) warns. The
// test's end undoes them all (the real HBase is shared by the tests).
func timelineSafetyLoad(t testing.TB, d *domain.Domain, ds *dataset.Dataset, viewer weibo.UserID, n int, far ...uint64) {
	t.Helper()
	ctx := t.Context()
	near := map[uint64]bool{uint64(viewer): true}
	for _, f := range far {
		near[f] = true
		for _, u := range append(ds.Fans(f), ds.Following(f)...) {
			near[u] = true
		}
	}
	var users []weibo.UserID
	for _, u := range ds.Users {
		if !near[u.ID] {
			users = append(users, weibo.UserID(u.ID))
		}
	}
	slices.Sort(users)
	if len(users) < 2*n {
		t.Fatalf("the data set has %d users apart from those near far, want %d", len(users), 2*n)
	}
	v := viewer
	blocks, mutes := users[:n], users[n:2*n]
	var filters []string
	t.Cleanup(func() {
		ctx := context.Background()
		for _, u := range blocks {
			if _, err := d.Safety.Unblock(ctx, v, u); err != nil {
				t.Errorf("unblock: %v", err)
				return
			}
		}
		for _, u := range mutes {
			if _, err := d.Safety.Unmute(ctx, v, u); err != nil {
				t.Errorf("unmute: %v", err)
				return
			}
		}
		for _, id := range filters {
			if _, err := d.Safety.DeleteFilter(ctx, v, id); err != nil {
				t.Errorf("delete filter: %v", err)
				return
			}
		}
	})
	for _, u := range blocks {
		if _, err := d.Safety.Block(ctx, v, u); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * 3600
	for i, u := range mutes {
		var duration *int
		if i%2 == 0 {
			duration = &day // timed and untimed mutes alike
		}
		if _, err := d.Safety.Mute(ctx, v, u, duration, i%3 == 0); err != nil {
			t.Fatal(err)
		}
	}
	home := []safety.Context{safety.ContextHome}
	inputs := []safety.FilterInput{{Phrase: timelineSafetyWarn, Contexts: home, Action: safety.Warn}}
	for i := range 19 {
		in := safety.FilterInput{Phrase: fmt.Sprintf("zzqx%d absent", i), Contexts: home, Action: safety.Hide, WholeWord: i%2 == 0}
		switch i % 4 {
		case 1:
			in.Phrase = fmt.Sprintf("无此词语%d", i)
		case 2:
			in.Action = safety.Warn
		case 3:
			in.Contexts = []safety.Context{safety.ContextHome, safety.ContextNotifications, safety.ContextTopic, safety.ContextComments}
		}
		inputs = append(inputs, in)
	}
	for _, in := range inputs {
		f, err := d.Safety.CreateFilter(ctx, v, in)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, f.ID)
	}
}

// checkTimelineSafetyLoad fails t unless viewer's first home page shows
// the warning of timelineSafetyLoad on some post: the page reads the Set.
func checkTimelineSafetyLoad(t testing.TB, d *domain.Domain, viewer uint64) {
	t.Helper()
	c, err := d.Timeline.HomeTimeline(t.Context(), weibo.UserID(viewer), weibo.Page{First: new(20)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Edges {
		if slices.Contains(e.Post.Filtered, safety.FilterResult{Phrase: timelineSafetyWarn, Action: safety.Warn}) {
			return
		}
	}
	t.Fatalf("no post of the first page (%d edges) carries the warning %q", len(c.Edges), timelineSafetyWarn)
}

// timelineSafetyViewer is timelineSafetyLoad of n blocks and mutes for the
// data set's user uid, far from their own timeline, then
// checkTimelineSafetyLoad.
func timelineSafetyViewer(t testing.TB, d *domain.Domain, ds *dataset.Dataset, uid uint64, n int) {
	t.Helper()
	timelineSafetyLoad(t, d, ds, weibo.UserID(uid), n, uid)
	checkTimelineSafetyLoad(t, d, uid)
}
