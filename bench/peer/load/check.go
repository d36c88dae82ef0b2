package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/dataset"
)

// homeQuery is bench/k6/home.js's query, which peer-home.js sends too.
const homeQuery = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`

// homePage is the part of the answer check compares.
type homePage struct {
	Data struct {
		HomeTimeline struct {
			Edges []struct {
				Node struct {
					Content   string    `json:"content"`
					CreatedAt time.Time `json:"createdAt"`
					Author    struct {
						Username string `json:"username"`
					} `json:"author"`
				} `json:"node"`
			} `json:"edges"`
			PageInfo struct {
				HasNextPage bool `json:"hasNextPage"`
			} `json:"pageInfo"`
		} `json:"homeTimeline"`
	} `json:"data"`
	Errors json.RawMessage `json:"errors"`
}

// checkParallel is the number of readers check asks for at once.
const checkParallel = 8

// check sends the home page query to the GraphQL endpoint url as each
// reader of the users file, a few at once, and compares each answer with
// the data set's home timeline (dataset.HomeTimeline: authors, texts,
// times, and whether a next page exists): both systems must serve the
// same pages. The error is the first mismatch or failed request found.
func check(ds *dataset.Dataset, url, usersPath string) error {
	b, err := os.ReadFile(usersPath)
	if err != nil {
		return err
	}
	var users struct {
		Readers []reader `json:"readers"`
	}
	if err := json.Unmarshal(b, &users); err != nil {
		return fmt.Errorf("%s: %w", usersPath, err)
	}
	if len(users.Readers) == 0 {
		return fmt.Errorf("%s: no readers", usersPath)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range min(checkParallel, len(users.Readers)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(users.Readers) {
					return
				}
				if err := checkReader(ctx, ds, url, users.Readers[i]); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
	wg.Wait()
	return first
}

// checkPage is the page size check asks for.
const checkPage = 50

// checkReader compares r's first home page from url with the data set's.
func checkReader(ctx context.Context, ds *dataset.Dataset, url string, r reader) error {
	body, _ := json.Marshal(map[string]any{"query": homeQuery, "variables": map[string]any{"first": checkPage}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	var page homePage
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reader %s: %w", r.Username, err)
	}
	if len(page.Errors) > 0 {
		return fmt.Errorf("reader %s: %s", r.Username, page.Errors)
	}
	var uid uint64
	if _, err := fmt.Sscan(r.ID, &uid); err != nil {
		return fmt.Errorf("reader id %q: %w", r.ID, err)
	}
	want := ds.HomeTimeline(uid, checkPage+1)
	got := page.Data.HomeTimeline
	if more := len(want) > checkPage; got.PageInfo.HasNextPage != more {
		return fmt.Errorf("reader %s: hasNextPage %v, the data set's %v", r.Username, got.PageInfo.HasNextPage, more)
	}
	want = want[:min(checkPage, len(want))]
	if len(got.Edges) != len(want) {
		return fmt.Errorf("reader %s: %d edges, the data set's %d", r.Username, len(got.Edges), len(want))
	}
	for i, e := range got.Edges {
		w := want[i]
		u, _ := ds.User(w.Author)
		if e.Node.Author.Username != u.Username || e.Node.Content != w.Text || !e.Node.CreatedAt.Equal(w.CreatedAt()) {
			return fmt.Errorf("reader %s: edge %d is %s's post of %v, the data set's %s's of %v",
				r.Username, i, e.Node.Author.Username, e.Node.CreatedAt, u.Username, w.CreatedAt())
		}
	}
	return nil
}
