// Command flush writes the memstores of every table of an HBase namespace to
// HFiles without restarting HBase (remote.Store.FlushNamespace), so that a
// benchmark after a bulk import reads from HFiles as one after a restart
// does.
//
//	go run ./bench/flush -zk 127.0.0.1:2181 -namespace bench_full
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/weibohbase/gateway/hbase/remote"
)

func main() {
	zk := flag.String("zk", "127.0.0.1:2181", "ZooKeeper quorum of the HBase cluster")
	ns := flag.String("namespace", "weibo", "namespace whose tables to flush")
	flag.Parse()
	if err := flush(*zk, *ns); err != nil {
		fmt.Fprintln(os.Stderr, "flush:", err)
		os.Exit(1)
	}
}

func flush(zk, ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	st, err := remote.Open(ctx, zk)
	if err != nil {
		return err
	}
	defer st.Close()
	t0 := time.Now()
	tables, err := st.FlushNamespace(ctx, ns)
	for _, t := range tables {
		fmt.Println("flushed", t)
	}
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("namespace %q has no tables", ns)
	}
	fmt.Printf("%d tables flushed in %v\n", len(tables), time.Since(t0).Round(time.Millisecond))
	return nil
}
