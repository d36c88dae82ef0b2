package dataset

import (
	"errors"
	"fmt"
	"math"
)

// MaxScale is the largest factor Scale accepts: the copies' times are
// shifted by whole milliseconds below one second (see Scale).
const MaxScale = 1000

// ScaleSeed is the fixed seed of Scale's choice of the edges that cross
// from one copy to another, so that a scaled data set is the same on
// every run.
const ScaleSeed uint64 = 0x5ca1ab1e_0f0110e5

// scaleCross is the fraction of a copy's follows (per 1024) that point at
// the followee's counterpart in another copy rather than in the same one.
const scaleCross = 256

// Stride returns the id distance between two copies of a user in a data set
// Scale builds from ds: the smallest power of ten above every id of ds
// (100,000 for the real graph's ids 1..76,851), so that copy k of user n is
// user n + k·Stride and its username "u<n + k·Stride>" reads as the copy
// number before the real id (u300042 is copy 3 of u42).
func (ds *Dataset) Stride() uint64 {
	var top uint64
	if len(ds.Users) > 0 {
		top = ds.Users[len(ds.Users)-1].ID
	}
	s := uint64(10)
	for s <= top {
		s *= 10
	}
	return s
}

// Scale returns a data set n times as large as ds, built deterministically
// from it (a fixed seed, ScaleSeed), for measuring how a cost grows with the
// data. n = 1 returns ds itself. For n > 1, with S = ds.Stride():
//
//   - users: n copies of every user; copy 0 is the user itself (same id,
//     username and SourceUserID), copy k (1 ≤ k < n) has id ID + k·S and
//     username "u<ID + k·S>" (rule 1), so no two users share an id or a
//     username;
//   - follows: copy k of every follow a→b runs from copy k of a to copy k
//     of b, except for the real follows whose hash (of the edge and
//     ScaleSeed) falls in the lowest quarter of its range, about a quarter
//     of them, whose copy k runs from copy k of a to copy (k+d) mod n of b,
//     d in [1, n) also chosen by the hash;
//   - posts: copy k of every post, by copy k of its author, k·⌊1000/n⌋ ms
//     after it (at most 999 ms, so the copies' posts of one real post never
//     meet another real post's and the copies' timelines interleave over the
//     same days); Posts keep ds's order with the n copies of each post
//     together, so for ds read from the project's files Millis still
//     ascends and is distinct;
//   - EdgeLines, SelfLoops, DuplicateEdges, Rows, BlankRows, Authors and
//     DroppedRows are n times ds's, as if n files were read.
//
// Why the degree distribution stays the real one: an edge a→b whose copies
// cross by d maps copy k of a to copy (k+d) mod n of b, and k → (k+d) mod n
// is a bijection of the copies, so every copy of b still gets exactly one
// in-edge from that real edge, and every copy of a one out-edge. Every copy
// of every user thus has its real fan count and follow count (and its real
// post count), so each copy's in- and out-degree distributions are the real
// ones, and the fan-out (inbox entries per post) is n times the real one.
// Copies of two distinct followees of a stay distinct, and a ≠ b, so the
// scaled follows have no repeated edge and no self-loop. What changes is
// only which copy an edge reaches: the crossing quarter joins the copies into
// one graph instead of n disjoint ones (reciprocity and clustering drop
// where one of a pair of edges crosses and the other does not).
//
// Scale returns an error for n < 1, n > MaxScale, or ids that would pass
// 2^63. The result shares the posts' texts with ds.
func (ds *Dataset) Scale(n int) (*Dataset, error) {
	if n < 1 || n > MaxScale {
		return nil, fmt.Errorf("dataset: scale %d outside [1, %d]", n, MaxScale)
	}
	if n == 1 {
		return ds, nil
	}
	stride := ds.Stride()
	if stride > math.MaxInt64/uint64(n) {
		return nil, errors.New("dataset: scaled ids would overflow")
	}
	step := int64(1000 / n)
	copyID := func(id uint64, k int) uint64 { return id + uint64(k)*stride }

	out := &Dataset{
		EdgeLines:      n * ds.EdgeLines,
		SelfLoops:      n * ds.SelfLoops,
		DuplicateEdges: n * ds.DuplicateEdges,
		Rows:           n * ds.Rows,
		BlankRows:      n * ds.BlankRows,
		Authors:        n * ds.Authors,
		DroppedRows:    n * ds.DroppedRows,
	}
	out.Users = make([]User, 0, n*len(ds.Users))
	for k := range n {
		for _, u := range ds.Users {
			id := copyID(u.ID, k)
			out.Users = append(out.Users, User{ID: id, Username: Username(id), SourceUserID: u.SourceUserID})
		}
	}
	out.Follows = make([]Edge, 0, n*len(ds.Follows))
	for k := range n {
		for _, e := range ds.Follows {
			to := k
			if d, ok := crossing(e, n); ok {
				to = (k + d) % n
			}
			out.Follows = append(out.Follows, Edge{Follower: copyID(e.Follower, k), Followee: copyID(e.Followee, to)})
		}
	}
	out.indexGraph()
	out.Posts = make([]Post, 0, n*len(ds.Posts))
	for _, p := range ds.Posts {
		for k := range n {
			out.Posts = append(out.Posts, Post{Author: copyID(p.Author, k), Millis: p.Millis + int64(k)*step, Text: p.Text})
		}
	}
	out.indexPosts()
	return out, nil
}

// crossing reports whether the copies of edge e cross to another copy in a
// data set scaled n times (n ≥ 2), and by how many copies d (1 ≤ d < n):
// a hash of the edge and ScaleSeed picks scaleCross/1024 of the edges.
func crossing(e Edge, n int) (d int, ok bool) {
	h := mix(mix(e.Follower^ScaleSeed) ^ e.Followee)
	if h%1024 >= scaleCross {
		return 0, false
	}
	return 1 + int((h>>10)%uint64(n-1)), true
}

// mix is SplitMix64's finalizer: a fixed bijective scramble of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
