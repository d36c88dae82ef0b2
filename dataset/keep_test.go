package dataset_test

import (
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
)

func TestKeepPosts(t *testing.T) {
	ds, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	day2, _ := dataset.DayStart("2020-03-02")
	one := ds.KeepPosts(func(p dataset.Post) bool { return p.Millis >= day2.UnixMilli() })
	var want, total int
	for _, p := range ds.Posts {
		if p.Millis >= day2.UnixMilli() {
			want++
		}
	}
	for _, u := range one.Users {
		total += one.PostCount(u.ID)
		for _, i := range one.PostsOf(u.ID) {
			if one.Posts[i].Author != u.ID || one.Posts[i].Millis < day2.UnixMilli() {
				t.Fatalf("post %d of user %d: %+v", i, u.ID, one.Posts[i])
			}
		}
	}
	if len(one.Posts) != want || total != want || want == 0 || want == len(ds.Posts) {
		t.Fatalf("kept %d posts (%d by author lists), want %d of %d", len(one.Posts), total, want, len(ds.Posts))
	}
	if len(ds.Posts) == want || ds.PostCount(ds.Posts[0].Author) == 0 {
		t.Fatal("KeepPosts changed the original")
	}
	if len(one.Users) != len(ds.Users) || len(one.Follows) != len(ds.Follows) {
		t.Fatal("users or follows changed")
	}
}
