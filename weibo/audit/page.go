package audit

import (
	"bytes"
	"context"
	"math"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Filter selects the events Page lists; zero fields select everything.
type Filter struct {
	// Actor keeps the events of this user (not 0).
	Actor *weibo.UserID
	// Target keeps the events whose target is this user, role or
	// department.
	Target *weibo.NodeID
	// Action keeps the events of this action ("" keeps all).
	Action string
	// Since keeps the events recorded at or after this time.
	Since *time.Time
	// Until keeps the events recorded before this time.
	Until *time.Time
}

// EventEdge is one edge of an EventConnection.
type EventEdge struct {
	// Event is the edge's event.
	Event *Event
	// Cursor is the edge's cursor, for Page's after.
	Cursor string
}

// EventConnection is one page of the audit log, newest first.
type EventConnection struct {
	// Edges are the page's events.
	Edges []EventEdge
	// PageInfo is the page's Relay page info.
	PageInfo weibo.PageInfo
}

// pageRounds bounds the scans of one page: each reads at most first+2
// rows of the chosen listing, with one batched read of their event rows.
// A filter whose other criteria match few of the listing's rows (an
// action of one actor, a narrow window of a busy listing) therefore
// reads at most pageRounds*(first+2) rows per page: a page that did not
// fill up in them ends at the last row read, with hasNextPage and an end
// cursor there (paging.Query.Rounds), and the next page goes on from it.
const pageRounds = 10

// Page lists the events f selects, newest first (ties in one millisecond
// by nonce), first at a time (1 to 100, default 20) after the cursor
// after.
//
// It scans one listing of weibo:audit: the index by actor when f names an
// actor, else by target when it names one, else by action when it names
// one, else the event rows themselves; bounded to [f.Since, f.Until)
// through the time part of the rowkeys. The criteria the listing does not
// cover are checked in memory against each row's copy of the event, and
// an index row is kept only when its event row (the authority, read with
// one batched GetMany per chunk of rows) exists and meets every criterion:
// the index rows of a half-written or half-removed event are skipped. The
// scans of one page are bounded (pageRounds), so a page may hold fewer
// events than first, even none, with hasNextPage true.
//
// A cursor names the listing and the position in it, so it must come
// back with a filter that picks the same listing and key (the same actor,
// target or action); Since, Until and the criteria checked in memory may
// change between pages.
//
// Errors: BAD_USER_INPUT on "actor" for the user 0, on "target" for a post
// or an id 0, on "action" for an invalid action, on "until" when Since is
// not before Until, on "first" or "after" for bad paging arguments (a
// cursor of another listing included); the store's.
func (l *Log) Page(ctx context.Context, f Filter, first *int, after *string) (_ *EventConnection, err error) {
	defer weibo.Wrap(&err, "audit log")
	p, err := newPlan(f)
	if err != nil {
		return nil, err
	}
	q := p.query()
	row, err := q.CursorRow("after", after)
	if err != nil {
		return nil, err
	}
	if row != nil {
		if ix, _, prefix, ok := DecodeKey(row); !ok || ix != p.index || !bytes.Equal(prefix, p.prefix) {
			return nil, weibo.BadInput("after", "the cursor %s belongs to another listing of the audit log", weibo.Excerpt(*after))
		}
	}
	edges, info, err := paging.Read(ctx, l.st, q, first, after, p.verifier(l.st),
		func(e *Event, cursor string) EventEdge { return EventEdge{Event: e, Cursor: cursor} })
	if err != nil {
		return nil, err
	}
	return &EventConnection{Edges: edges, PageInfo: info}, nil
}

// plan is a validated Filter: the listing Page scans and the criteria
// every event must meet.
type plan struct {
	index  Index
	prefix []byte // the listing's prefix (with its actor, target or action)

	actor            weibo.UserID // 0: any
	target           weibo.NodeID // Kind 0: any
	action           string       // "": any
	sinceMs, untilMs int64        // [sinceMs, untilMs), ms
}

// newPlan validates f and picks the listing (see Page).
func newPlan(f Filter) (*plan, error) {
	p := &plan{sinceMs: 0, untilMs: math.MaxInt64}
	if f.Actor != nil {
		if *f.Actor == 0 {
			return nil, weibo.BadInput("actor", "the actor must be a user")
		}
		p.actor = *f.Actor
	}
	if f.Target != nil {
		p.target = canonical(*f.Target)
		if p.target.Kind == 0 {
			return nil, weibo.BadInput("target", "an audit target is a user, a role, a department or a report, got %s", weibo.Excerpt(f.Target.String()))
		}
	}
	if f.Action != "" {
		if err := checkAction("action", f.Action); err != nil {
			return nil, err
		}
		p.action = f.Action
	}
	if f.Since != nil && f.Until != nil && !f.Since.Before(*f.Until) {
		return nil, weibo.BadInput("until", "until must be later than since")
	}
	if f.Since != nil {
		p.sinceMs = ceilMillis(*f.Since)
	}
	if f.Until != nil {
		p.untilMs = max(ceilMillis(*f.Until), 0)
	}
	switch {
	case p.actor != 0:
		p.index, p.prefix = ByActor, ActorPrefix(p.actor)
	case p.target.Kind != 0:
		p.index, p.prefix = ByTarget, TargetPrefix(p.target)
	case p.action != "":
		p.index, p.prefix = ByAction, ActionPrefix(p.action)
	default:
		p.index, p.prefix = ByTime, EventPrefix()
	}
	return p, nil
}

// canonical returns n with only the id its Kind names, Kind 0 when n
// cannot be an audit target.
func canonical(n weibo.NodeID) weibo.NodeID {
	var c weibo.NodeID
	switch n.Kind {
	case weibo.NodeUser:
		c = weibo.NodeID{Kind: n.Kind, User: n.User}
	case weibo.NodeRole:
		c = weibo.NodeID{Kind: n.Kind, Role: n.Role}
	case weibo.NodeDepartment:
		c = weibo.NodeID{Kind: n.Kind, Dept: n.Dept}
	case weibo.NodeReport:
		c = weibo.NodeID{Kind: n.Kind, Report: n.Report}
	}
	if TargetPrefix(c) == nil {
		return weibo.NodeID{}
	}
	return c
}

// ceilMillis returns t in ms since the epoch, rounded up: an event's time
// (whole ms) is at or after t exactly when it is at or after ceilMillis(t).
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// query is the paging query of p's listing: rows under the listing's
// marker byte (so that a cursor's payload holds the listing's key, and one
// of another listing is told apart), within the listing's prefix and
// p's window of time.
func (p *plan) query() paging.Query {
	q := paging.Query{Kind: paging.CursorAudit, Rounds: pageRounds,
		Scan: hbase.Scan{Table: tables.Audit, Prefix: p.prefix[:1], Families: []string{tables.FamAudit}}}
	q.Scan.Start, q.Scan.Stop = Range(p.prefix, p.sinceMs, p.untilMs)
	switch p.index {
	case ByTime:
		q.RowLen = EventKeyLen
	case ByActor:
		q.RowLen = ActorKeyLen
	case ByTarget:
		q.RowLen = TargetKeyLen
	default:
		q.MaxRowLen = ActionKeyMaxLen
	}
	return q
}

// match reports whether e meets every criterion of p.
func (p *plan) match(e *Entry) bool {
	return (p.actor == 0 || e.Actor == p.actor) &&
		(p.target.Kind == 0 || e.Target == p.target) &&
		(p.action == "" || e.Action == p.action) &&
		p.sinceMs <= e.ID.Millis && e.ID.Millis < p.untilMs
}

// verifier returns the verify function of p's scan (paging.Read): event
// rows are read as they are; index rows are first checked against their
// own copy of the event, and those that pass against their event rows,
// read with one GetMany.
func (p *plan) verifier(st hbase.Store) func(context.Context, []*hbase.Result) ([]*Event, error) {
	return func(ctx context.Context, rows []*hbase.Result) ([]*Event, error) {
		out := make([]*Event, len(rows))
		var (
			gets []*hbase.Get
			at   []int // gets[j] is the event row of rows[at[j]]
		)
		for i, r := range rows {
			ix, e, ok := DecodeRow(r)
			switch {
			case !ok || ix != p.index || !p.match(e):
			case ix == ByTime:
				out[i] = eventOf(e)
			default:
				gets = append(gets, &hbase.Get{Table: tables.Audit, Row: EventKey(e.ID), Families: []string{tables.FamAudit}})
				at = append(at, i)
			}
		}
		if len(gets) == 0 {
			return out, nil
		}
		events, err := st.GetMany(ctx, gets)
		if err != nil {
			return nil, err
		}
		for j, r := range events {
			// The event row is the authority: it must exist and meet the
			// criteria itself (its id is the index row's, so meeting the
			// listing's own criterion means it lists the event there).
			if ix, e, ok := DecodeRow(r); ok && ix == ByTime && p.match(e) {
				out[at[j]] = eventOf(e)
			}
		}
		return out, nil
	}
}
