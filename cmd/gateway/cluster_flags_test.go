package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/feed"
)

// TestClusterFlagRanges: --fanout-workers, --fanout-batch and --live-queue
// out of their ranges are refused before anything starts, in range they reach the
// service options.
func TestClusterFlagRanges(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		fail string
	}{
		{args: nil},
		{args: []string{"--fanout-batch", "5000", "--fanout-workers", "8"}},
		{args: []string{"--fanout-batch", "20000"}},
		{args: []string{"--fanout-batch", "0"}, fail: "--fanout-batch 0: want 1 to 20000"},
		{args: []string{"--fanout-batch", "20001"}, fail: "--fanout-batch 20001"},
		{env: map[string]string{"GATEWAY_FANOUT_BATCH": "-3"}, fail: "--fanout-batch -3"},
		{args: []string{"--fanout-workers", "0"}, fail: "--fanout-workers 0: want at least 1"},
		{args: []string{"--live-queue", "16"}},
		{args: []string{"--live-queue", "0"}, fail: "--live-queue 0: want 1 to 10000"},
		{env: map[string]string{"GATEWAY_LIVE_QUEUE": "10001"}, fail: "--live-queue 10001"},
		{args: []string{"--post-cache", "-2"}, fail: "--post-cache -2"},
		{args: []string{"--post-cache", "100", "--post-cache-ttl", "0s"}, fail: "positive TTL"},
		{args: []string{"--post-cache", "-1", "--post-cache-ttl", "0s"}, fail: "positive TTL"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f serveClusterFlags
			f.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := f.err()
			switch {
			case tt.fail == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.fail != "" && (err == nil || !strings.Contains(err.Error(), tt.fail)):
				t.Fatalf("err = %v, want one saying %q", err, tt.fail)
			case tt.fail == "" && len(f.serviceOptions(hbase.BackendEmbedded)) < 4:
				t.Errorf("%d service options, want the lease, sweep, workers and batch", len(f.serviceOptions(hbase.BackendEmbedded)))
			}
		})
	}
}

// TestPostCacheByStore: --post-cache's default follows the store (the
// feed's default size on HBase, off on the embedded store); a size given,
// by flag or environment, holds on both.
func TestPostCacheByStore(t *testing.T) {
	tests := []struct {
		args            []string
		env             string
		hbase, embedded int
	}{
		{hbase: feed.DefaultPostCacheSize, embedded: 0},
		{args: []string{"--post-cache", "-1"}, hbase: feed.DefaultPostCacheSize, embedded: 0},
		{args: []string{"--post-cache", "100"}, hbase: 100, embedded: 100},
		{args: []string{"--post-cache", "0"}, hbase: 0, embedded: 0},
		{env: "2000", hbase: 2000, embedded: 2000},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" env="+tt.env, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("GATEWAY_POST_CACHE", tt.env)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f serveClusterFlags
			f.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := f.err(); err != nil {
				t.Fatal(err)
			}
			if got := f.postCacheSize(hbase.BackendHBase); got != tt.hbase {
				t.Errorf("hbase: %d posts, want %d", got, tt.hbase)
			}
			if got := f.postCacheSize(hbase.BackendEmbedded); got != tt.embedded {
				t.Errorf("embedded: %d posts, want %d", got, tt.embedded)
			}
		})
	}
}
