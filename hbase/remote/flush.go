package remote

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
)

// FlushNamespace writes the memstores of every table of namespace ns to
// HFiles, so that reads after a bulk import come from HFiles as they do
// after a restart (benchmarks), and returns the tables it flushed ("ns:name",
// sorted). HBase's admin API has a flush that gohbase does not send; a
// snapshot of the default (flush) kind flushes its table first, so
// FlushNamespace takes one snapshot of each table through gohbase's admin
// client and deletes it again (a snapshot holds no data of its own: it
// references the HFiles). Errors: the master's, mapped as other admin calls'
// are (a missing namespace among them); the tables flushed before the error
// are returned with it.
func (s *Store) FlushNamespace(ctx context.Context, ns string) ([]string, error) {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	ac, ok := s.adminRPC.(gohbase.AdminClient)
	if !ok {
		return nil, fmt.Errorf("hbase: gohbase admin client %T has no snapshots", s.adminRPC)
	}
	tables, err := s.listTables(ctx, ns)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		table := fullTableName(ns, name)
		snapName := fmt.Sprintf("flush_%s_%d", strings.ReplaceAll(table, ":", "_"), time.Now().UnixNano())
		snap, err := hrpc.NewSnapshot(ctx, snapName, table)
		if err != nil {
			return done, err
		}
		if err := ac.CreateSnapshot(snap); err != nil {
			return done, mapError("flush (snapshot)", table, err)
		}
		if err := ac.DeleteSnapshot(snap); err != nil {
			return done, mapError("flush (delete snapshot)", table, err)
		}
		done = append(done, table)
	}
	return done, nil
}
