package report_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/moderation/report"
)

// TestResolveReopenStorm has moderators resolve, reopen and assign a few
// reports at once, over and over, on both backends: every call either
// changes the report or is refused with REPORT_NOT_OPEN,
// REPORT_NOT_RESOLVED or CONCURRENT_UPDATE; afterwards the counts of
// OPEN and RESOLVED reports equal their recount and the reports listed
// per status, and fsck is clean.
func TestResolveReopenStorm(t *testing.T) {
	const workers, rounds, reports = 6, 12, 3
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			_, svc, _ := domaintest.FsckService(t, b)
			var ids []weibo.ReportID
			for range reports {
				ids = append(ids, reported(t, svc).ID)
			}
			var mods []weibo.UserID
			for range workers {
				mods = append(mods, domaintest.MustUser(t, svc, domaintest.Uniq("mod")).ID)
			}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range rounds {
						id := ids[(w+i)%reports]
						var err error
						switch (w + i) % 3 {
						case 0:
							_, err = svc.Reports.Resolve(ctx, mods[w], id, report.ActionDismiss, nil, nil)
						case 1:
							_, err = svc.Reports.Reopen(ctx, mods[w], id)
						default:
							_, err = svc.Reports.Assign(ctx, mods[w], id, i%2 == 0)
						}
						if e, ok := errors.AsType[*weibo.Error](err); err != nil && (!ok || (e.Reason != report.ReasonNotOpen && e.Reason != report.ReasonNotResolved && e.Reason != weibo.ReasonConcurrentUpdate)) {
							t.Errorf("worker %d round %d on %s: %v", w, i, id, err)
							return
						}
					}
				})
			}
			wg.Wait()
			rs, err := svc.Writes.RecountCounters(ctx, []counted.Counter{{Kind: report.OpenCount}, {Kind: report.ResolvedCount}})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				if !r.Done || r.Before != r.After {
					t.Errorf("counter %d after the storm: %+v", i, r)
				}
			}
			open, resolved, err := svc.Reports.Counts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[report.Status]int64{}
			for _, st := range []report.Status{report.StatusOpen, report.StatusResolved} {
				conn, err := svc.Reports.Queue(ctx, report.Filter{Status: &st}, new(weibo.MaxPageSize), nil)
				if err != nil {
					t.Fatal(err)
				}
				listed[st] = int64(len(conn.Edges))
			}
			if open != listed[report.StatusOpen] || resolved != listed[report.StatusResolved] || open+resolved != reports {
				t.Errorf("counts %d open, %d resolved; listed %v", open, resolved, listed)
			}
			domaintest.CheckFsck(t, svc)
		})
	}
}
