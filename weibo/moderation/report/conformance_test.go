package report_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// reported makes a fresh report of a fresh user's post by a fresh
// reporter through d, and returns it.
func reported(t *testing.T, d *domain.Domain) *report.Report {
	t.Helper()
	ctx := t.Context()
	target, reporter := domaintest.MustUser(t, d, domaintest.Uniq("target")), domaintest.MustUser(t, d, domaintest.Uniq("reporter"))
	p, err := d.Feed.Publish(ctx, target.ID, "reported post")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Reports.Create(ctx, reporter.ID, report.Input{Target: target.ID, Posts: []weibo.PostID{p.ID}, Category: report.CategorySpam})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestResolveConformance runs the conformance suite of counted relations
// (countedtest) over a report's resolution (DELETE_CONTENT) and its
// reopening, through the domain's API, on both backends: each is killed
// at every step the relation declares and at its audit event's steps, and
// outlives its budget; after the restart's repair the counts of OPEN and
// RESOLVED reports are exact, the report is RESOLVED exactly when the
// resolution decided it (and listed in its status's queue only), the
// reported post is gone and the reporter notified exactly then, the audit
// log lists the resolution exactly then, and fsck finds nothing.
func TestResolveConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingReport}, org.StepAuditRecorded, org.StepAuditVisible)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingReport, report.StepDecided, steps, resolvePair))
		})
	}
}

// resolvePair is the resolution of a fresh report, and its reopening.
func resolvePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	rep := reported(t, d)
	mod := domaintest.MustUser(t, d, domaintest.Uniq("moderator"))
	return &countedtest.Pair[*domain.Domain]{
		Owner:    uint64(rep.ID),
		Counters: []counted.Counter{{Kind: notify.UnreadCount, Owner: uint64(rep.Reporter)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Reports.Resolve(ctx, mod.ID, rep.ID, report.ActionDeleteContent, new("spam"), nil)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Reports.Reopen(ctx, mod.ID, rep.ID)
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			got, err := d.Reports.Get(ctx, []weibo.ReportID{rep.ID})
			if err != nil {
				return false, err
			}
			resolved := got[0].Status == report.StatusResolved
			for _, st := range []report.Status{report.StatusOpen, report.StatusResolved} {
				listed, err := listedIn(ctx, d, st, rep.ID)
				if err != nil {
					return false, err
				}
				if listed != (got[0].Status == st) {
					return false, fmt.Errorf("report %s is %s; listed among %s: %v", rep.ID, got[0].Status, st, listed)
				}
			}
			actions, err := domaintest.AuditActions(ctx, d, report.ReportNode(rep.ID))
			if err != nil {
				return false, err
			}
			if resolved != (len(actions) > 0 && actions[0] == report.ActionResolve) {
				return false, fmt.Errorf("report %s is %s; audit log %q", rep.ID, got[0].Status, actions)
			}
			if resolved {
				ps, err := d.Feed.GetPosts(ctx, []weibo.PostID{rep.Posts[0].ID})
				if err != nil {
					return false, err
				}
				if ps[0] != nil {
					return false, fmt.Errorf("report %s resolved with DELETE_CONTENT; its post is still there", rep.ID)
				}
				if !notified(domaintest.Notifs(t, d, rep.Reporter, 20), rep.ID) {
					return false, fmt.Errorf("report %s resolved; its reporter has no REPORT_RESOLVED notification", rep.ID)
				}
			}
			return resolved, nil
		},
	}
}

// listedIn reports whether report id is on the first page of status st's
// queue (the test's reports are the newest).
func listedIn(ctx context.Context, d *domain.Domain, st report.Status, id weibo.ReportID) (bool, error) {
	conn, err := d.Reports.Queue(ctx, report.Filter{Status: &st}, new(weibo.MaxPageSize), nil)
	if err != nil {
		return false, err
	}
	for _, e := range conn.Edges {
		if e.Report.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// notified reports whether ns holds the REPORT_RESOLVED notification of
// report id, with no actor shown.
func notified(ns []*notify.Notification, id weibo.ReportID) bool {
	for _, n := range ns {
		if rid, ok := n.ReportID(); ok && rid == id && n.ActorCount == 0 {
			return true
		}
	}
	return false
}

// TestCreateConformance runs the suite over reportContent (no reverse):
// killed at every step, the report exists exactly when its row was
// written, is then in its reporter's list and the OPEN queue, and the
// counts are exact.
func TestCreateConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := []string{report.StepMarked, report.StepSequenced, report.StepDecided, report.StepCounted, report.StepIndexed, report.StepSettled}
			m := domaintest.DomainModule(tables.PendingReport, report.StepDecided, steps, createPair)
			m.NoReverse = true
			countedtest.Run(t, st, m)
		})
	}
}

// createPair is a fresh user's report of another's post.
func createPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	target, reporter := domaintest.MustUser(t, d, domaintest.Uniq("target")), domaintest.MustUser(t, d, domaintest.Uniq("reporter"))
	p, err := d.Feed.Publish(ctx, target.ID, "reported post")
	if err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*domain.Domain]{
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Reports.Create(ctx, reporter.ID, report.Input{Target: target.ID, Posts: []weibo.PostID{p.ID}, Category: report.CategoryAbuse})
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			mine, err := d.Reports.Mine(ctx, reporter.ID, nil, nil)
			if err != nil || len(mine.Edges) == 0 {
				return false, err
			}
			if len(mine.Edges) > 1 {
				return false, fmt.Errorf("reporter %s has %d reports, want 1", reporter.ID, len(mine.Edges))
			}
			rep := mine.Edges[0].Report
			if listed, err := listedIn(ctx, d, report.StatusOpen, rep.ID); err != nil || !listed {
				return false, fmt.Errorf("report %s not in the OPEN queue (%v)", rep.ID, err)
			}
			return true, nil
		},
	}
}
