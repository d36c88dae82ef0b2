package seed

import (
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/repost"
)

// TestRepostDemo seeds a small data set shaped like the demo's start (u1
// follows u2 to u6; u1 and u4 post), makes the demo's reposts, and checks
// them as u1's home timeline shows them: the four reposts first, with
// their originals (u2's repost, reposted by u3, names u4's post), the
// counts exact and fsck clean.
func TestRepostDemo(t *testing.T) {
	ctx := t.Context()
	edges := "1 2\n1 3\n1 4\n1 5\n1 6\n2 4\n"
	ds, err := dataset.Read(strings.NewReader(edges), strings.NewReader("date,userid,text\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := newSeedStore(t)
	if _, err := Import(ctx, st, ds, seedTestOptions); err != nil {
		t.Fatal(err)
	}
	svc := orgService(t, st)
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	var ids []weibo.PostID
	for _, p := range []struct {
		by   weibo.UserID
		text string
	}{{1, "u1 的微博"}, {4, "u4 的旧微博"}, {4, "u4 的新微博"}} {
		post, err := svc.Feed.Publish(ctx, p.by, p.text)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, post.ID)
		time.Sleep(2 * time.Millisecond) // each post, and then the reposts, in a later millisecond
	}
	u1post, u4new := ids[0], ids[2]
	if err := RepostDemo(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := svc.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	four := 4
	page, err := svc.Timeline.HomeTimeline(ctx, 1, weibo.Page{First: &four})
	if err != nil {
		t.Fatal(err)
	}
	// Reposts made in one millisecond list by author id: compare by reposter.
	want := map[weibo.UserID]struct {
		root    weibo.PostID
		content string
	}{6: {u1post, "转发给大家"}, 5: {u4new, repost.EmptyRepostContent}, 3: {u4new, "说得好 //@u2: 致敬所有在一线的人。"}, 2: {u4new, "致敬所有在一线的人。"}}
	if len(page.Edges) != len(want) {
		t.Fatalf("u1's timeline has %d entries, want %d", len(page.Edges), len(want))
	}
	for i, e := range page.Edges {
		p := e.Post
		w, ok := want[p.ID.Author]
		if !ok || p.RepostOfID == nil || *p.RepostOfID != w.root || p.Content != w.content {
			t.Errorf("entry %d = %s %q (of %v), want a repost of %s by one of u2, u3, u5, u6", i, p.ID, p.Content, p.RepostOfID, w.root)
		}
		delete(want, p.ID.Author)
	}
	ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{u4new, u1post})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].RepostCount != 3 || ps[1].RepostCount != 1 {
		t.Errorf("repostCounts: u4's post %d, u1's %d; want 3, 1", ps[0].RepostCount, ps[1].RepostCount)
	}
	rep, err := fsck.Run(ctx, svc, fsck.Options{})
	if err != nil || len(rep.Issues) > 0 {
		t.Fatalf("fsck: %v %v", err, rep.Counts())
	}
}
