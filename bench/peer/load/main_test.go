package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/dataset"
)

// TestPickReaders: with 0, every user of a line "A B" with A != B, once
// each, in an order of the fixed seed; a number picks the first ones of
// that order.
func TestPickReaders(t *testing.T) {
	// 1..40 follow the next user; 50 follows only itself; 60 is only
	// followed; 7 follows two users.
	var edges strings.Builder
	for a := 1; a <= 40; a++ {
		fmt.Fprintf(&edges, "%d %d\n", a, a+1)
	}
	edges.WriteString("7 60\n50 50\n")
	ds, err := dataset.Read(strings.NewReader(edges.String()), strings.NewReader("date,userid,text\n"))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(us []dataset.User) []uint64 {
		var out []uint64
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	all := ids(pickReaders(ds, 0))
	sorted := slices.Sorted(slices.Values(all))
	var want []uint64
	for a := uint64(1); a <= 40; a++ {
		want = append(want, a)
	}
	if !slices.Equal(sorted, want) {
		t.Fatalf("every reader: %v, want 1..40 once each", sorted)
	}
	if slices.IsSorted(all) {
		t.Errorf("every reader: %v, not shuffled", all)
	}
	if again := ids(pickReaders(ds, 0)); !slices.Equal(again, all) {
		t.Errorf("a second pick %v differs from the first %v", again, all)
	}
	if got := ids(pickReaders(ds, 10)); !slices.Equal(got, all[:10]) {
		t.Errorf("10 readers: %v, want the first 10 of every reader's order %v", got, all[:10])
	}
	if got := ids(pickReaders(ds, 1000)); !slices.Equal(got, all) {
		t.Errorf("1000 readers: %v, want all %d", got, len(all))
	}
}
