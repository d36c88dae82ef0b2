package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/domain"
)

// fsckListPerKind is how many issues of one kind fsck lists one by one;
// the counts per kind cover the rest.
const fsckListPerKind = 20

// fsck runs `gateway fsck [--repair] [--grace D] [store flags]`: it checks
// everything stored on two sides — user ↔ role, role ↔ name, parent ↔
// child, department ↔ member, follows ↔ fans, every counter against a
// recount, every inbox against its owner's followees' posts within the
// backfill window, unfinished writes and fan-outs — and, with --repair,
// makes each dependent side agree with its authoritative side. It prints
// up to 20 issues of each kind and the number of issues per kind, and
// exits 1 while issues remain unrepaired.
func runFsck(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("fsck", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	repair := fs.Bool("repair", false, "repair what is found (default: report only)")
	grace := fs.Duration("grace", 30*time.Second, "leave alone rows younger than this: they may belong to a change in flight")
	rg := repairGraceFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := domain.New(st, domain.WithLogger(log), domain.WithRepairGrace(*rg))
	start := time.Now()
	rep, err := fsck.Run(ctx, svc, fsck.Options{Repair: *repair, Grace: *grace, RepairGrace: *rg})
	if err != nil {
		return migrateHint(err)
	}
	listed := map[string]int{}
	for _, is := range rep.Issues {
		if listed[is.Kind]++; listed[is.Kind] > fsckListPerKind {
			continue
		}
		state := "found"
		switch {
		case is.Repaired:
			state = "repaired"
		case is.Pending:
			state = "pending (younger than --grace)"
		}
		fmt.Fprintf(os.Stdout, "%-26s %-9s %s\n", is.Kind, state, is.Detail)
	}
	counts := rep.Counts()
	fmt.Fprintf(os.Stdout, "issues per kind (%d in all):\n", len(rep.Issues))
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		fixed := 0
		for _, is := range rep.Issues {
			if is.Kind == kind && is.Repaired {
				fixed++
			}
		}
		fmt.Fprintf(os.Stdout, "  %-26s %8d  (repaired %d)\n", kind, counts[kind], fixed)
	}
	rows := 0
	for _, n := range rep.Rows {
		rows += n
	}
	left := rep.Unrepaired()
	log.Info("fsck done", "store", st.Backend(), "rows_read", rows, "issues", len(rep.Issues), "unrepaired", left, "repair", *repair,
		"elapsed", time.Since(start).Round(time.Millisecond))
	if left > 0 {
		if !*repair {
			return fmt.Errorf("%d issue(s) found; run again with --repair to fix them", left)
		}
		return fmt.Errorf("%d issue(s) left unrepaired", left)
	}
	return nil
}

// migrateHint adds to a missing-table error that `gateway migrate` creates
// the tables a newer version added (weibo:pending, for one).
func migrateHint(err error) error {
	if errors.Is(err, hbase.ErrTableNotFound) {
		return fmt.Errorf("%w (run `gateway migrate`: it creates the tables this version added)", err)
	}
	return err
}
