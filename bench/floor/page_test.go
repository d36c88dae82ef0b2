package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// homeQuery is bench/k6/home.js's query.
const homeQuery = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`

// TestFloorAnswersAsTheGateway checks, on both backends and the demo
// subset of the real data, that the floor's page is the gateway's, byte
// for byte, for readers spread over all who follow someone and several
// page sizes, also after a post on their pages was deleted; and that the
// floor makes no more store calls than the gateway's page.
func TestFloorAnswersAsTheGateway(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.OpenOwn(t, tables.Namespace, "floor")
			ds, err := demo.Load()
			if err != nil {
				t.Fatalf("demo data: %v", err)
			}
			// As make bench serves it: no request budget (--rate-limit 0),
			// so no budget in the answer's extensions.
			g := gatewaytest.Start(t, st, gatewaytest.WithDataset(ds), gatewaytest.WithConfig(func(c *server.Config) { c.RateLimit = -1 }))
			// The floor's store calls, counted per request as the gateway's.
			var floorCalls atomic.Int64
			fh := newPageHandler(hbase.Instrument(st), auth.NewIssuer([]byte(gatewaytest.Secret), time.Hour))
			floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := hbase.WithCallCounter(r.Context(), func(context.Context, string, string) { floorCalls.Add(1) })
				fh.ServeHTTP(w, r.WithContext(ctx))
			}))
			t.Cleanup(floor.Close)

			var readers []uint64
			seen := map[uint64]bool{}
			for i, e := range ds.Follows {
				if !seen[e.Follower] && i%97 == 0 {
					seen[e.Follower] = true
					readers = append(readers, e.Follower)
				}
			}
			if len(readers) < 10 {
				t.Fatalf("only %d readers", len(readers))
			}
			tokens := map[uint64]string{}
			for _, id := range readers[:10] {
				tokens[id] = gatewaytest.Login(t, g.URL, "u"+strconv.FormatUint(id, 10), seed.DefaultPassword)
			}
			compare := func(t *testing.T, first int) {
				for _, id := range readers[:10] {
					res := g.In(t).Post(tokens[id], homeQuery, map[string]any{"first": first})
					if err := res.Err(homeQuery); err != nil {
						t.Fatalf("u%d: %v", id, err)
					}
					want := res.Body
					floorCalls.Store(0)
					got := post(t, floor.URL, tokens[id], first)
					if n := floorCalls.Load(); n > int64(res.StoreCalls) {
						t.Errorf("u%d, first %d: the floor made %d store calls, the gateway %d", id, first, n, res.StoreCalls)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("u%d, first %d: the answers differ from byte %d: the floor's ends\n%s\nthe gateway's\n%s",
							id, first, diffAt(got, want), tail(got, diffAt(got, want)), tail(want, diffAt(got, want)))
					}
				}
			}
			for _, first := range []int{50, 20, 1} {
				compare(t, first)
			}

			// A post on the first reader's page is deleted by its author.
			var page struct {
				HomeTimeline struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
			gatewaytest.Call(t, g.URL, tokens[readers[0]], homeQuery, map[string]any{"first": 5}, &page)
			if len(page.HomeTimeline.Edges) < 3 {
				t.Fatalf("u%d's page has %d edges", readers[0], len(page.HomeTimeline.Edges))
			}
			pid, err := weibo.ParsePostID(page.HomeTimeline.Edges[2].Node.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Svc.Feed.DeletePost(t.Context(), pid); err != nil {
				t.Fatalf("delete %s: %v", pid, err)
			}
			if err := g.Svc.FlushFanout(t.Context()); err != nil {
				t.Fatal(err)
			}
			compare(t, 50)
		})
	}
}

// post sends home.js's request to the floor at base and returns the body.
func post(t *testing.T, base, token string, first int) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": homeQuery, "variables": map[string]any{"first": first}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("floor: %d %s %v", res.StatusCode, strings.TrimSpace(string(b)), err)
	}
	return b
}

// diffAt returns the offset of the first byte where a and b differ.
func diffAt(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// tail returns up to 200 bytes of b from 40 before off.
func tail(b []byte, off int) []byte {
	lo := max(off-40, 0)
	return b[lo:min(len(b), lo+200)]
}
