// Command flush writes the memstores of every table of an HBase namespace to
// HFiles without restarting HBase, so that a benchmark after a bulk import
// reads from HFiles as one after a restart does. HBase's admin API has a
// flush, but gohbase does not send it; a snapshot of the default (flush)
// kind flushes the table first, so flush takes one of each table and
// deletes it again (it holds no data of its own: it references the HFiles).
//
//	go run ./bench/flush -zk 127.0.0.1:2181 -namespace bench_full
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
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
	ac := gohbase.NewAdminClient(zk)
	list, err := hrpc.NewListTableNames(ctx, hrpc.ListNamespace(ns))
	if err != nil {
		return err
	}
	names, err := ac.ListTableNames(list)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("namespace %q has no tables", ns)
	}
	for _, tn := range names {
		table := string(tn.GetNamespace()) + ":" + string(tn.GetQualifier())
		name := fmt.Sprintf("flush_%s_%s_%d", tn.GetNamespace(), tn.GetQualifier(), time.Now().UnixNano())
		t0 := time.Now()
		snap, err := hrpc.NewSnapshot(ctx, name, table)
		if err != nil {
			return err
		}
		if err := ac.CreateSnapshot(snap); err != nil {
			return fmt.Errorf("snapshot of %s: %w", table, err)
		}
		if err := ac.DeleteSnapshot(snap); err != nil {
			return fmt.Errorf("delete snapshot %s: %w", name, err)
		}
		fmt.Printf("flushed %s in %v\n", table, time.Since(t0).Round(time.Millisecond))
	}
	return nil
}
