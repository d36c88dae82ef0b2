package dataset_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
)

// smallEdges and smallPosts are a tiny data set: 6 users (ids 1..6, one of
// them, 4, only a followee), a reciprocated pair, a self-loop, and posts over
// two days whose authors are ranked onto the graph users.
const smallEdges = "1 2\n2 1\n1 3\n2 3\n3 4\n5 3\n5 5\n6 1\n6 2\n6 3\n"

const smallPosts = "date,userid,text\n" +
	"2020-03-01,900,a\n2020-03-01,901,b\n2020-03-01,900,c\n2020-03-01,902,d\n" +
	"2020-03-02,903,e\n2020-03-02,900,f\n2020-03-02,901,\" \"\n2020-03-02,904,g\n"

func small(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Read(strings.NewReader(smallEdges), strings.NewReader(smallPosts))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// degrees returns how many users have each (fans, follows, posts) triple.
func degrees(ds *dataset.Dataset, users []dataset.User) map[[3]int]int {
	out := map[[3]int]int{}
	for _, u := range users {
		out[[3]int{ds.FanCount(u.ID), ds.FollowCount(u.ID), ds.PostCount(u.ID)}]++
	}
	return out
}

func TestScale(t *testing.T) {
	dm, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ds   *dataset.Dataset
		n    int
	}{
		{"small x2", small(t), 2},
		{"small x3", small(t), 3},
		{"small x10", small(t), 10},
		{"demo x2", dm, 2},
		{"demo x5", dm, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			real, n := tc.ds, tc.n
			sc, err := real.Scale(n)
			if err != nil {
				t.Fatal(err)
			}
			stride := real.Stride()
			if stride <= real.Users[len(real.Users)-1].ID || stride%10 != 0 {
				t.Fatalf("stride %d, max id %d", stride, real.Users[len(real.Users)-1].ID)
			}
			if len(sc.Users) != n*len(real.Users) || len(sc.Follows) != n*len(real.Follows) || len(sc.Posts) != n*len(real.Posts) {
				t.Fatalf("%d users, %d follows, %d posts; want %d times %d, %d, %d",
					len(sc.Users), len(sc.Follows), len(sc.Posts), n, len(real.Users), len(real.Follows), len(real.Posts))
			}
			if sc.Rows != n*real.Rows || sc.EdgeLines != n*real.EdgeLines || sc.SelfLoops != n*real.SelfLoops {
				t.Errorf("counters %d/%d/%d, want n times %d/%d/%d", sc.Rows, sc.EdgeLines, sc.SelfLoops, real.Rows, real.EdgeLines, real.SelfLoops)
			}

			// Ids and usernames: ascending, unique, copy 0 the real users,
			// copy k the real user's id plus k strides.
			names := map[string]bool{}
			for i, u := range sc.Users {
				if i > 0 && u.ID <= sc.Users[i-1].ID {
					t.Fatalf("Users[%d].ID %d after %d", i, u.ID, sc.Users[i-1].ID)
				}
				if names[u.Username] {
					t.Fatalf("username %q twice", u.Username)
				}
				names[u.Username] = true
				k, r := i/len(real.Users), real.Users[i%len(real.Users)]
				want := r
				want.ID += uint64(k) * stride
				want.Username = dataset.Username(want.ID)
				if u != want {
					t.Fatalf("Users[%d] = %+v, want %+v (copy %d of %+v)", i, u, want, k, r)
				}
			}

			// Degrees: every copy of every user has the real user's fan,
			// follow and post counts, so each copy's distribution is the
			// real one.
			realDeg := degrees(real, real.Users)
			for k := range n {
				copyUsers := sc.Users[k*len(real.Users) : (k+1)*len(real.Users)]
				if got := degrees(sc, copyUsers); !maps.Equal(got, realDeg) {
					t.Errorf("copy %d: degree distribution %v, want %v", k, got, realDeg)
				}
				for i, u := range copyUsers {
					r := real.Users[i].ID
					if sc.FanCount(u.ID) != real.FanCount(r) || sc.FollowCount(u.ID) != real.FollowCount(r) || sc.PostCount(u.ID) != real.PostCount(r) {
						t.Fatalf("copy %d of %d: fans/follows/posts %d/%d/%d, want %d/%d/%d", k, r,
							sc.FanCount(u.ID), sc.FollowCount(u.ID), sc.PostCount(u.ID), real.FanCount(r), real.FollowCount(r), real.PostCount(r))
					}
				}
			}
			if sc.InboxEntries() != int64(n)*real.InboxEntries() {
				t.Errorf("inbox entries %d, want %d x %d", sc.InboxEntries(), n, real.InboxEntries())
			}

			// Follows: no self-loop, none repeated, each the copy of a real
			// edge (same real endpoints, from its follower's copy), and some
			// cross copies when there are enough edges to pick from.
			seen := map[dataset.Edge]bool{}
			crossed := 0
			for i, e := range sc.Follows {
				if e.Follower == e.Followee || seen[e] {
					t.Fatalf("follow %v: self-loop or repeated", e)
				}
				seen[e] = true
				re := real.Follows[i%len(real.Follows)]
				if e.Follower%stride != re.Follower || e.Followee%stride != re.Followee || int(e.Follower/stride) != i/len(real.Follows) {
					t.Fatalf("Follows[%d] = %v is no copy of %v", i, e, re)
				}
				if e.Follower/stride != e.Followee/stride {
					crossed++
				}
			}
			if len(real.Follows) > 1000 {
				frac := float64(crossed) / float64(len(sc.Follows))
				if frac < 0.2 || frac > 0.3 {
					t.Errorf("%.3f of the follows cross copies, want about a quarter", frac)
				}
			}

			// Posts: copy k of post j by copy k of its author, k*(1000/n)
			// ms later, ascending and distinct times, unique post ids.
			ids := map[[2]uint64]bool{}
			for i, p := range sc.Posts {
				k, rp := i%n, real.Posts[i/n]
				want := dataset.Post{Author: rp.Author + uint64(k)*stride, Millis: rp.Millis + int64(k*(1000/n)), Text: rp.Text}
				if p != want {
					t.Fatalf("Posts[%d] = %+v, want %+v", i, p, want)
				}
				if i > 0 && p.Millis <= sc.Posts[i-1].Millis {
					t.Fatalf("Posts[%d].Millis %d after %d", i, p.Millis, sc.Posts[i-1].Millis)
				}
				id := [2]uint64{p.Author, uint64(p.Millis)}
				if ids[id] {
					t.Fatalf("post id %v twice", id)
				}
				ids[id] = true
			}

			// Deterministic.
			again, err := real.Scale(n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(again.Follows, sc.Follows) || !reflect.DeepEqual(again.Posts, sc.Posts) || !reflect.DeepEqual(again.Users, sc.Users) {
				t.Error("two Scale calls differ")
			}
		})
	}
}

// TestScaleConnects checks that the crossing follows join the copies: on the
// demo graph every copy of the largest weakly connected component reaches
// every other copy.
func TestScaleConnects(t *testing.T) {
	dm, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	sc, err := dm.Scale(n)
	if err != nil {
		t.Fatal(err)
	}
	top := dm.RankUsers()[0]
	stride := dm.Stride()
	reached := map[uint64]bool{top: true}
	queue := []uint64{top}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range slices.Concat(sc.Fans(u), sc.Following(u)) {
			if !reached[v] {
				reached[v] = true
				queue = append(queue, v)
			}
		}
	}
	for k := range uint64(n) {
		if !reached[top+k*stride] {
			t.Errorf("copy %d of the most followed user %d not reached from copy 0", k, top)
		}
	}
}

func TestScaleOne(t *testing.T) {
	ds := small(t)
	sc, err := ds.Scale(1)
	if err != nil {
		t.Fatal(err)
	}
	if sc != ds {
		t.Error("Scale(1) is not the data set itself")
	}
	for _, n := range []int{0, -1, dataset.MaxScale + 1} {
		if _, err := ds.Scale(n); err == nil {
			t.Errorf("Scale(%d): no error", n)
		}
	}
}
