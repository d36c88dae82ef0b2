package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/weibo"
)

// fsck runs `gateway fsck [--repair] [--grace D] [store flags]`: it checks
// every two-sided pair of the role and department tables (user ↔ role,
// role ↔ name, parent ↔ child, department ↔ member) and, with --repair,
// makes each index side agree with its authoritative side. It exits 1 when
// issues remain unrepaired.
func runFsck(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("fsck", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	repair := fs.Bool("repair", false, "repair what is found (default: report only)")
	grace := fs.Duration("grace", 30*time.Second, "leave alone index rows younger than this: they may belong to a change in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := weibo.New(st, weibo.WithLogger(log))
	rep, err := fsck.Run(ctx, svc, fsck.Options{Repair: *repair, Grace: *grace})
	if err != nil {
		return err
	}
	for _, is := range rep.Issues {
		state := "found"
		switch {
		case is.Repaired:
			state = "repaired"
		case is.Pending:
			state = "pending (younger than --grace)"
		}
		fmt.Fprintf(os.Stdout, "%-26s %-9s %s\n", is.Kind, state, is.Detail)
	}
	rows := 0
	for _, n := range rep.Rows {
		rows += n
	}
	left := rep.Unrepaired()
	log.Info("fsck done", "store", st.Backend(), "rows_read", rows, "issues", len(rep.Issues), "unrepaired", left, "repair", *repair)
	if left > 0 {
		if !*repair {
			return fmt.Errorf("%d issue(s) found; run again with --repair to fix them", left)
		}
		return fmt.Errorf("%d issue(s) left unrepaired", left)
	}
	return nil
}
