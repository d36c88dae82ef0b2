package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// pairBlock is how many pages BenchmarkHomeSafety's paired run reads in
// one state before switching.
const pairBlock = 200

// BenchmarkHomeSafety measures what a viewer's blocks, mutes and keyword
// filters cost a home page: BenchmarkHomePage's page of 50
// (homePageQuery, served in-process, cpu-ms/op the process's CPU per
// page) for 4 of the readers with the longest timelines, each blocking
// 1,000 users, muting 1,000 others and having 20 filters
// (timelineSafetyLoad: none of them hides a post of the page, one warns
// on most of its posts), against the same pages without them: the
// sub-benchmarks none and sets, then paired, which alternates the two
// every 200 pages and reports ratio, sets' CPU per page over none's (the
// number to read on a busy machine). Between states the readers' sets are
// taken off and put back. Before measuring it checks that both answer the
// same page. The target: ratio at most 1.2.
//
// The sets are made through the safety service for a stand-in user per
// reader, then the stand-in's cells (family s of its safety row) are
// written to the reader's row with one Put: the row as a compaction leaves
// it. Made in place, the 2,000 rewrites of the packed cells would stay in
// the embedded store's memtable as deleted versions that every read of
// the row steps over until a flush and compaction (on HBase that is the
// region server's work, not the gateway's).
//
//	BENCH=HomeSafety make bench   (or: go test ./server/ -run '^$' -bench 'HomeSafety/embedded' -benchtime 3s)
func BenchmarkHomeSafety(b *testing.B) {
	for _, be := range testenv.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			ctx := context.Background()
			g, ds := seededGatewayWith(b, be.Open(b), func(c *server.Config) { c.RateLimit = -1 })
			readers := busiest(ds, 4)
			var auths []string
			for _, uid := range readers {
				u, _ := ds.User(uid)
				auths = append(auths, "Bearer "+g.login(u.Username, seed.DefaultPassword))
			}
			body := []byte(`{"query":` + strconv.Quote(homePageQuery) + `,"variables":{"first":50}}`)
			do := func(w http.ResponseWriter, auth string) {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				g.h.ServeHTTP(w, req)
			}
			page := func(auth string) []byte {
				w := httptest.NewRecorder()
				do(w, auth)
				if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) || bytes.Count(w.Body.Bytes(), []byte(`"cursor"`)) != 50 {
					b.Fatalf("home page: status %d: %.300s", w.Code, w.Body.Bytes())
				}
				return w.Body.Bytes()
			}
			plain := make([][]byte, len(auths))
			for i, a := range auths {
				plain[i] = page(a)
			}
			st := g.svc.Store()
			puts := make([]*hbase.Put, len(readers))
			for i, uid := range readers {
				standIn, err := g.svc.Accounts.Register(ctx, uniqueName("standin"), "correct horse")
				if err != nil {
					b.Fatal(err)
				}
				timelineSafetyLoad(b, g.svc, ds, standIn.ID, 1000, readers...)
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(standIn.ID), Families: []string{tables.FamSafetySet}})
				if err != nil {
					b.Fatal(err)
				}
				vs := map[string][]byte{}
				for _, c := range r.Cells {
					vs[c.Qualifier] = c.Value
				}
				puts[i] = &hbase.Put{Table: tables.Safety, Row: tables.SafetyKey(weibo.UserID(uid)), Values: hbase.Values{tables.FamSafetySet: vs}}
			}
			// Each change writes the row's version anew, in the same
			// mutation, as the safety service's writes do.
			version := func() hbase.Values {
				return hbase.Values{tables.FamSafetyVersion: {tables.ColSafetyVersion: tables.NewSafetyVersion()}}
			}
			off := hbase.Values{tables.FamSafetySet: {tables.ColBlocks: nil, tables.ColMutes: nil, tables.ColFilters: nil}}
			b.Cleanup(func() { // the readers' rows as they were (the real HBase is shared)
				for _, p := range puts {
					_ = st.MutateRow(context.Background(), &hbase.RowMutation{Table: p.Table, Row: p.Row, Delete: off, Put: version()})
				}
			})
			sets := func(on bool) {
				for _, p := range puts {
					var err error
					if on {
						p.Values[tables.FamSafetyVersion] = version()[tables.FamSafetyVersion]
						err = st.Put(ctx, p)
					} else {
						err = st.MutateRow(ctx, &hbase.RowMutation{Table: p.Table, Row: p.Row, Delete: off, Put: version()})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, a := range auths { // warm what the change made cold
					page(a)
				}
			}
			sets(true)
			checkTimelineSafetyLoad(b, g.svc, readers[0])
			for i, a := range auths {
				if got := page(a); !bytes.Equal(got, plain[i]) {
					b.Fatalf("reader %d's page changed with the sets:\n%.500s\nwant\n%.500s", readers[i], got, plain[i])
				}
			}
			run := func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPU()
				i := 0
				var w discard
				for b.Loop() {
					w.h = http.Header{}
					do(&w, auths[i%len(auths)])
					i++
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			}
			sets(false)
			b.Run("none", run)
			sets(true)
			b.Run("sets", run)
			// paired: the two states alternate every pairBlock pages within
			// one run, each block's CPU counted to its state (the switches
			// not counted), so that a machine whose load drifts weighs on
			// both alike; ratio is sets' CPU per page over none's.
			b.Run("paired", func(b *testing.B) {
				var cpu [2]time.Duration
				var pages [2]int
				on := false
				i := 0
				var w discard
				cpu0 := processCPU()
				for b.Loop() {
					if i%pairBlock == 0 {
						k := 0
						if on {
							k = 1
						}
						cpu[k] += processCPU() - cpu0
						b.StopTimer()
						on = !on
						sets(on)
						b.StartTimer()
						cpu0 = processCPU()
					}
					w.h = http.Header{}
					do(&w, auths[i%len(auths)])
					k := 0
					if on {
						k = 1
					}
					pages[k]++
					i++
				}
				k := 0
				if on {
					k = 1
				}
				cpu[k] += processCPU() - cpu0
				if pages[0] > 0 && pages[1] > 0 {
					none := float64(cpu[0]) / float64(pages[0])
					with := float64(cpu[1]) / float64(pages[1])
					b.ReportMetric(none/float64(time.Millisecond), "none-cpu-ms/op")
					b.ReportMetric(with/float64(time.Millisecond), "sets-cpu-ms/op")
					b.ReportMetric(with/none, "ratio")
				}
			})
		})
	}
}
