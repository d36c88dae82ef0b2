package domain_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo/tables"
)

// BenchmarkPublishTopics: Publish of a post without a topic and of one
// with 3 topics, by an author without fans, on the on-disk embedded store
// (no fsync). It reports the call's p50 and p99 and its store calls (the
// fan-out, which runs after the call, is not started).
//
//	go test ./weibo/domain -run '^$' -bench 'PublishTopics$' -benchtime 300x
func BenchmarkPublishTopics(b *testing.B) {
	st, err := embedded.Open(b.TempDir(), embedded.WithNoSync())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	publishTopics(b, st)
}

// BenchmarkPublishTopicsHBase is BenchmarkPublishTopics on the real HBase
// (GATEWAY_TEST_HBASE_ZK), in a namespace of its own that it drops
// afterwards.
//
//	GATEWAY_TEST_HBASE_ZK=... go test ./weibo/domain -run '^$' -bench PublishTopicsHBase -benchtime 200x
func BenchmarkPublishTopicsHBase(b *testing.B) {
	publishTopics(b, benchNamespace(b))
}

func publishTopics(b *testing.B, st hbase.StoreAdmin) {
	ctx := context.Background()
	if err := tables.Migrate(ctx, st); err != nil {
		b.Fatal(err)
	}
	cs := &countingStore{StoreAdmin: st}
	svc := domaintest.Quiet(cs)
	author := mustUserB(b, svc, uniq("topicbench"))
	for _, c := range []struct{ name, text string }{
		{"none", "今天天气不错，出门走走"},
		{"3 topics", "#武汉加油# #抗击疫情# 今天天气不错 #新冠肺炎#"},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			var calls int64
			for i := 0; i < b.N; i++ {
				n0 := cs.n.Load()
				t0 := time.Now()
				p, err := svc.Feed.Publish(ctx, author, fmt.Sprintf("%s %d", c.text, i))
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				calls += cs.n.Load() - n0
				// The next post in a later millisecond: one author's posts
				// of one millisecond move on (Publish), which is not what
				// is measured here.
				b.StopTimer()
				for time.Now().UnixMilli() <= p.ID.Millis {
					time.Sleep(100 * time.Microsecond)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
			reportLatency(b, lat)
		})
	}
}

// countingStore counts the data calls made through it (a batched call
// counts one).
type countingStore struct {
	hbase.StoreAdmin
	n atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	c.n.Add(1)
	return c.StoreAdmin.Get(ctx, g)
}

func (c *countingStore) GetMany(ctx context.Context, gs []*hbase.Get) ([]*hbase.Result, error) {
	c.n.Add(1)
	return c.StoreAdmin.GetMany(ctx, gs)
}

func (c *countingStore) Put(ctx context.Context, p *hbase.Put) error {
	c.n.Add(1)
	return c.StoreAdmin.Put(ctx, p)
}

func (c *countingStore) PutMany(ctx context.Context, ps []*hbase.Put) error {
	c.n.Add(1)
	return c.StoreAdmin.PutMany(ctx, ps)
}

func (c *countingStore) Delete(ctx context.Context, d *hbase.Delete) error {
	c.n.Add(1)
	return c.StoreAdmin.Delete(ctx, d)
}

func (c *countingStore) DeleteMany(ctx context.Context, ds []*hbase.Delete) error {
	c.n.Add(1)
	return c.StoreAdmin.DeleteMany(ctx, ds)
}

func (c *countingStore) Scan(ctx context.Context, s *hbase.Scan, fn func(*hbase.Result) error) error {
	c.n.Add(1)
	return c.StoreAdmin.Scan(ctx, s, fn)
}

func (c *countingStore) CheckAndPut(ctx context.Context, p *hbase.Put, f, q string, v []byte) (bool, error) {
	c.n.Add(1)
	return c.StoreAdmin.CheckAndPut(ctx, p, f, q, v)
}

func (c *countingStore) CheckAndDelete(ctx context.Context, d *hbase.Delete, f, q string, v []byte) (bool, error) {
	c.n.Add(1)
	return c.StoreAdmin.CheckAndDelete(ctx, d, f, q, v)
}

func (c *countingStore) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	c.n.Add(1)
	return c.StoreAdmin.Increment(ctx, inc)
}
