// Package check is the shape of the checks a module declares for
// `gateway fsck` (package fsck): each compares the rows of its capability
// that HBase cannot write atomically — the authority every read trusts and
// the rows and counters that depend on it — and, when repairing, makes the
// dependent side agree with the authority.
//
// A module registers its Check with the write protocol
// (counted.Protocol.RegisterCheck) when it is built; fsck starts every
// registered check on one Pass, scans weibo:content once for all of them
// (Run.Content sees each stored post's content row, family p) and
// weibo:users once (Run.User sees each user's row), then runs
// their Check functions in the order they were registered. A check reads
// what else it needs through Pass.Scan, reports through Pass.Issue or
// Pass.Report, and repairs through its own module, which settles or
// recounts with the protocol's conditional writes, so running it beside
// live writes is safe.
package check

import (
	"context"
	"fmt"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
)

// Issue is one asymmetry a check found.
type Issue struct {
	// Kind names what is wrong ("like-dependent-missing", ...): the
	// constants of the module that reports it.
	Kind string
	// Detail says which rows, in words.
	Detail string
	// Repaired tells whether the run fixed it.
	Repaired bool
	// Pending tells that the issue is younger than the grace period and
	// was left alone.
	Pending bool
}

// Check is one module's part of `gateway fsck`.
type Check struct {
	// Name names it in errors: the module's ("like", "comment", ...).
	Name string
	// Start begins the check's part of one fsck run on p and returns
	// what the run calls. Required.
	Start func(p *Pass) Run
}

// Run is one fsck run of a Check.
type Run struct {
	// Content, when set, sees the content row (family p) of every stored
	// post — one with its text — of the run's one scan of weibo:content,
	// in rowkey order, before any Check function runs. r is valid only
	// during the call.
	Content func(id weibo.PostID, r *hbase.Result)
	// User, when set, sees the users row (families i and c) of every
	// user id of the run's one scan of weibo:users — also a row without
	// its username, left by a registration that died —, before any Check
	// function runs. r is valid only during the call.
	User func(uid weibo.UserID, r *hbase.Result)
	// Check compares what the run loaded and reports (and, when
	// repairing, repairs) what disagrees. Errors are the store's or a
	// repair's. Required.
	Check func(ctx context.Context) error
}

// Pass is one fsck run as the checks see it: the store, the run's options
// and clock, the rows read and the issues found. Its methods are not safe
// for concurrent use; fsck runs the checks one after another.
type Pass struct {
	st     hbase.Store
	repair bool
	grace  time.Duration
	now    int64
	rows   map[string]int
	issues []Issue
	exists func(weibo.PostID) bool
}

// NewPass returns a pass over st. repair says whether issues are fixed;
// grace spares rows younger than it (by cell timestamp), 0 none; now is the
// run's time in ms (Unix); exists reports whether a post is stored (the
// run's scan of weibo:content).
func NewPass(st hbase.Store, repair bool, grace time.Duration, now int64, exists func(weibo.PostID) bool) *Pass {
	return &Pass{st: st, repair: repair, grace: grace, now: now, rows: map[string]int{}, exists: exists}
}

// Store returns the store the run reads.
func (p *Pass) Store() hbase.Store { return p.st }

// Repairing reports whether the run fixes what it finds.
func (p *Pass) Repairing() bool { return p.repair }

// Now returns the run's time, ms since the Unix epoch.
func (p *Pass) Now() int64 { return p.now }

// Young reports whether a cell written at ts (ms) is younger than the
// run's grace: part of a change that may still be in flight.
func (p *Pass) Young(ts int64) bool {
	return ts != 0 && p.grace > 0 && p.now-ts < p.grace.Milliseconds()
}

// PostExists reports whether the post is stored: its content row holds its
// text.
func (p *Pass) PostExists(id weibo.PostID) bool { return p.exists(id) }

// Scan scans sc, counting the rows read per table, and calls fn with each.
func (p *Pass) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result)) error {
	return p.st.Scan(ctx, sc, func(r *hbase.Result) error {
		p.rows[sc.Table]++
		fn(r)
		return nil
	})
}

// CountRow counts one row of table read outside Scan (the run's shared
// scan of weibo:content).
func (p *Pass) CountRow(table string) { p.rows[table]++ }

// Issue records an issue of kind found in rows whose newest cell is at ts
// (ms; 0 for an issue no grace spares). When the run repairs and the
// issue is not young, it runs fix, which reports whether it changed
// anything; fix may be nil for an issue only reported. A failed fix's
// error names the issue.
func (p *Pass) Issue(kind string, ts int64, fix func() (bool, error), format string, args ...any) error {
	is := Issue{Kind: kind, Detail: fmt.Sprintf(format, args...)}
	if p.Young(ts) {
		is.Pending = true
	} else if p.repair && fix != nil {
		ok, err := fix()
		if err != nil {
			return fmt.Errorf("fsck: repair %s (%s): %w", kind, is.Detail, err)
		}
		is.Repaired = ok
	}
	p.issues = append(p.issues, is)
	return nil
}

// Report records issues as they are: for a check that repairs a batch of
// issues at once (a recount of many counters) and sets Repaired itself.
func (p *Pass) Report(issues ...Issue) { p.issues = append(p.issues, issues...) }

// Rows returns the rows read per table (full names).
func (p *Pass) Rows() map[string]int { return p.rows }

// Issues returns the issues found, in the order recorded.
func (p *Pass) Issues() []Issue { return p.issues }

// NewestTS returns the newest timestamp (ms) of r's cells.
func NewestTS(r *hbase.Result) int64 {
	var ts int64
	for _, c := range r.Cells {
		ts = max(ts, c.Timestamp)
	}
	return ts
}

// Found is an issue a check found, with the time (ms) of the newest cell
// it concerns (0: none that a grace spares).
type Found struct {
	Issue
	TS int64
}

// Batch records found issues whose repairs run together (one recount of
// many counters). The ones not young are passed, by index into found, to
// fix when the run repairs; fix returns, for each index it was given,
// whether it repaired it. A failed fix's error says how many issues it
// concerned.
func (p *Pass) Batch(found []Found, fix func(which []int) ([]bool, error)) error {
	var which []int
	for i := range found {
		if p.Young(found[i].TS) {
			found[i].Pending = true
		} else if p.repair {
			which = append(which, i)
		}
	}
	if len(which) > 0 {
		done, err := fix(which)
		if err != nil {
			return fmt.Errorf("fsck: repair %d issues of %s: %w", len(which), found[which[0]].Kind, err)
		}
		for j, i := range which {
			found[i].Repaired = j < len(done) && done[j]
		}
	}
	for _, f := range found {
		p.issues = append(p.issues, f.Issue)
	}
	return nil
}
