package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/bench/internal/tokens"
	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
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

// TestCheck runs check against a real gateway over a small imported data
// set: every reader's page is the data set's; with two readers' tokens
// swapped, check fails.
func TestCheck(t *testing.T) {
	ds, err := dataset.Read(strings.NewReader("1 2\n1 3\n2 3\n3 1\n4 3\n5 4\n"),
		strings.NewReader("date,userid,text\n2020-03-01,9,a\n2020-03-01,9,b\n2020-03-01,8,c\n2020-03-02,7,d\n2020-03-02,9,e\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithDataset(ds))
	picked := pickReaders(ds, 0)
	ids := make([]weibo.UserID, len(picked))
	for i, u := range picked {
		ids[i] = weibo.UserID(u.ID)
	}
	toks, err := tokens.Mint(t.Context(), g.URL, []byte(gatewaytest.Secret), ids)
	if err != nil {
		t.Fatal(err)
	}
	write := func(toks []string) string {
		var f struct {
			Readers []reader `json:"readers"`
		}
		for i, u := range picked {
			f.Readers = append(f.Readers, reader{ID: strconv.FormatUint(u.ID, 10), Username: u.Username, Token: toks[i]})
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "users.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := check(ds, g.URL+"/graphql", write(toks)); err != nil {
		t.Fatalf("check: %v", err)
	}
	// Reader 5 follows 4, who wrote nothing; reader 1 follows the authors.
	i1 := slices.IndexFunc(picked, func(u dataset.User) bool { return u.ID == 1 })
	i5 := slices.IndexFunc(picked, func(u dataset.User) bool { return u.ID == 5 })
	swapped := slices.Clone(toks)
	swapped[i1], swapped[i5] = swapped[i5], swapped[i1]
	if err := check(ds, g.URL+"/graphql", write(swapped)); err == nil {
		t.Fatal("check with two readers' tokens swapped: no error")
	} else {
		t.Logf("swapped tokens: %v", err)
	}
}
