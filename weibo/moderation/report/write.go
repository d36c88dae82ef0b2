package report

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Input is a report as reportContent gives it.
type Input struct {
	// Target is the reported user.
	Target weibo.UserID
	// Posts and Comments are the reported items, each the target's.
	Posts    []weibo.PostID
	Comments []weibo.CommentID
	// Category is what is wrong with them.
	Category Category
	// Comment is the reporter's comment; "" for none.
	Comment string
}

// textRule is the rule of a reporter's comment and a moderator's note.
func textRule(field string) weibo.TextRule {
	return weibo.TextRule{Field: field, MaxChars: MaxComment, MaxBytes: 4 * MaxComment}
}

// Create makes reporter's report of in and returns it, OPEN. Errors:
// BAD_USER_INPUT on "input.userId" for a report of oneself, on "input"
// for no item or more than MaxItems (after removing repeats), on
// "input.postIds" or "input.commentIds" naming an item that does not
// exist or is not the target's, on "input.comment" for a comment that is
// not 1 to MaxComment characters; NOT_FOUND for an unknown target; a
// *RateLimitError beyond RateLimit open reports within RateWindow.
// Nothing is written before all of them are checked.
//
// Writes, in order (package counted): the marker; the sequences of both
// counters; the report row with CheckAndPut(absent) — the authority,
// holding the items' text as read —; the OPEN count +1; the settle of
// its index rows (its status's queue, its reporter's list); the marker's
// delete.
func (s *Service) Create(ctx context.Context, reporter weibo.UserID, in Input) (_ *Report, err error) {
	defer weibo.Wrap(&err, "report content")
	if in.Target == reporter {
		return nil, weibo.BadInput("input.userId", "you cannot report yourself")
	}
	cat, ok := byteOf(categories, in.Category)
	if !ok {
		return nil, weibo.BadInput("input.category", "unknown category %q", in.Category)
	}
	if in.Comment != "" {
		if err := weibo.ValidateText(textRule("input.comment"), in.Comment); err != nil {
			return nil, err
		}
	}
	posts, comments := dedupe(in.Posts), dedupe(in.Comments)
	if n := len(posts) + len(comments); n < 1 || n > MaxItems {
		return nil, weibo.BadInput("input", "a report names 1 to %d posts and comments, got %d", MaxItems, n)
	}
	cells, err := s.items(ctx, in.Target, posts, comments)
	if err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	if err := s.rateLimit(ctx, reporter, now); err != nil {
		return nil, err
	}
	if in.Comment != "" {
		cells[tables.ColReportComment] = []byte(in.Comment)
	}
	cells[tables.ColReportCategory] = []byte{byte(cat)}
	cells[tables.ColReportReporter] = tables.EncodeID(reporter)
	cells[tables.ColReportTarget] = tables.EncodeID(in.Target)
	cells[tables.ColReportCreated] = tables.EncodeMillis(now)
	cells[tables.ColReportState] = tables.EncodeReportState(tables.ReportState{Status: tables.ReportOpen, Version: 1})
	for range 3 {
		id := tables.NewReportID(now, rand.Uint64())
		op, err := s.w.Begin(ctx, s.rel, uint64(id), 0)
		if err != nil {
			return nil, err
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Reports, Row: tables.ReportKey(id), Values: hbase.Values{tables.FamReport: cells}},
			tables.FamReport, tables.ColReportState, nil)
		if err != nil {
			return nil, err
		}
		if !ok { // another report drew the same id: try another
			if err := s.w.End(ctx, op); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.w.Step(ctx, StepDecided); err != nil {
			return nil, err
		}
		if err := s.count(ctx, op, +1, 0); err != nil {
			return nil, err
		}
		rep, err := s.settle(ctx, id)
		if err != nil {
			return nil, err
		}
		return rep, s.w.End(ctx, op)
	}
	return nil, fmt.Errorf("no free report id at %d", now)
}

// dedupe returns ids without repeats, in order.
func dedupe[T comparable](ids []T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// items reads the reported posts and comments (one batched read each)
// and returns their cells of the report row: each must exist and be the
// target's (BAD_USER_INPUT naming it otherwise). It also checks that the
// target exists (NOT_FOUND).
func (s *Service) items(ctx context.Context, target weibo.UserID, posts []weibo.PostID, comments []weibo.CommentID) (map[string][]byte, error) {
	us, err := s.users.GetUsers(ctx, []weibo.UserID{target})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.NotFoundOn("input.userId", fmt.Sprintf("user %s not found", target))
	}
	cells := map[string][]byte{}
	var media []weibo.MediaID
	if len(posts) > 0 {
		ps, err := s.posts.GetPosts(ctx, posts)
		if err != nil {
			return nil, err
		}
		for i, p := range ps {
			if p == nil || p.ID.Author != target {
				return nil, weibo.BadInput("input.postIds", "post %s does not exist or is not user %s's", posts[i], target)
			}
			cells[tables.ReportPostQualifier(p.ID.Millis)] = []byte(p.Content)
			media = append(media, p.Media...)
		}
		if len(media) > 0 {
			cells[tables.ColReportMedia] = tables.EncodeMediaIDs(media)
		}
	}
	if len(comments) > 0 {
		cs, err := s.comments.GetComments(ctx, comments)
		if err != nil {
			return nil, err
		}
		for i, c := range cs {
			if c == nil || c.ID.Author != target {
				return nil, weibo.BadInput("input.commentIds", "comment %s does not exist or is not user %s's", comments[i], target)
			}
			cells[tables.ReportCommentQualifier(c.ID.Post, c.ID.Millis)] = []byte(c.Content)
		}
	}
	return cells, nil
}

// rateScan bounds the reporter's rows the rate limit reads: the reports
// of the last RateWindow, newest first, at most this many.
const rateScan = 100

// rateLimit refuses a report of reporter at now when RateLimit of their
// reports made within RateWindow are OPEN: one scan of their index rows
// of the window and one batched read of those reports. Concurrent
// reports of one reporter each see the others' rows only once written,
// so a burst of simultaneous calls may pass the limit by its concurrency.
func (s *Service) rateLimit(ctx context.Context, reporter weibo.UserID, now int64) error {
	from := now - RateWindow.Milliseconds()
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Reports, Families: []string{tables.FamReportIndex},
		Start: tables.ReportReporterStart(reporter, now+s.w.GraceMillis()), Stop: tables.ReportReporterStart(reporter, from), Limit: rateScan})
	if err != nil || len(rows) == 0 {
		return err
	}
	ids := make([]weibo.ReportID, 0, len(rows))
	for _, r := range rows {
		if _, id, ok := tables.DecodeReportReporterKey(r.Row); ok {
			ids = append(ids, id)
		}
	}
	reps, err := s.Get(ctx, ids)
	if err != nil {
		return err
	}
	var open []int64
	for _, r := range reps {
		if r != nil && r.Reporter == reporter && r.Status == StatusOpen && r.CreatedAtMillis > from {
			open = append(open, r.CreatedAtMillis)
		}
	}
	if len(open) < RateLimit {
		return nil
	}
	// The newest first: the RateLimit-th newest leaving the window makes room.
	slices.Sort(open)
	slices.Reverse(open)
	wait := open[RateLimit-1] + RateWindow.Milliseconds() - now
	return &RateLimitError{RetryAfter: time.Duration(max(wait, 1)) * time.Millisecond}
}

// count adds dOpen and dResolved to the counters of op's write, within
// its budget (counted.Protocol.Count, with a delta per counter), then
// steps StepCounted; past its budget it leaves the counting to the
// repairer.
func (s *Service) count(ctx context.Context, op *counted.Op, dOpen, dResolved int64) error {
	if !s.w.InBudget(op) {
		return s.w.Keep(ctx, op, nil)
	}
	var incs []*hbase.Increment
	if dOpen != 0 {
		incs = append(incs, s.w.Increment(counters[0], dOpen))
	}
	if dResolved != 0 {
		incs = append(incs, s.w.Increment(counters[1], dResolved))
	}
	if _, err := s.w.Increments(ctx, incs...); err != nil {
		return err
	}
	return s.w.Step(ctx, StepCounted)
}

// settle makes the index rows of report id agree with its row (the
// authority): the index row of its status written and the other
// status's deleted, its reporter's row written; a report row re-read
// until it holds the status written (counted.Settle). It returns the
// report as last read (nil when none), and steps StepIndexed.
func (s *Service) settle(ctx context.Context, id weibo.ReportID) (*Report, error) {
	read := func(ctx context.Context) (*Report, error) {
		rs, err := s.Get(ctx, []weibo.ReportID{id})
		if err != nil {
			return nil, err
		}
		return rs[0], nil
	}
	rep, err := read(ctx)
	if err != nil {
		return nil, err
	}
	write := func(ctx context.Context, rep *Report) error {
		entry := hbase.Values{tables.FamReportIndex: {tables.ColReportEntry: {}}}
		if rep == nil {
			return s.st.DeleteMany(ctx, []*hbase.Delete{
				{Table: tables.Reports, Row: tables.ReportStatusKey(tables.ReportOpen, id)},
				{Table: tables.Reports, Row: tables.ReportStatusKey(tables.ReportResolved, id)}})
		}
		other := tables.ReportOpen
		if rep.state.Status == tables.ReportOpen {
			other = tables.ReportResolved
		}
		if err := s.st.PutMany(ctx, []*hbase.Put{
			{Table: tables.Reports, Row: tables.ReportStatusKey(rep.state.Status, id), Values: entry},
			{Table: tables.Reports, Row: tables.ReportReporterKey(rep.Reporter, id), Values: entry}}); err != nil {
			return err
		}
		return s.st.Delete(ctx, &hbase.Delete{Table: tables.Reports, Row: tables.ReportStatusKey(other, id)})
	}
	same := func(a, b *Report) bool {
		return (a == nil) == (b == nil) && (a == nil || a.state.Status == b.state.Status)
	}
	rep, err = counted.Settle(ctx, rep, same, write, read)
	if err != nil {
		return nil, err
	}
	if s.media != nil && rep != nil {
		// An OPEN report holds its posts' pictures, a RESOLVED one not.
		if rep.state.Status == tables.ReportOpen {
			err = s.media.Hold(ctx, id, rep.Media)
		} else {
			err = s.media.Release(ctx, id)
		}
		if err != nil {
			return nil, err
		}
	}
	return rep, s.w.Step(ctx, StepIndexed)
}

// resolveExtra is the marker's extra bytes of a resolution: the state it
// writes, then the suspension's end (ms; 0 for none) — what the repairer
// needs to finish its action when the report still holds that state.
func resolveExtra(state tables.ReportState, until *time.Time) []byte {
	b := tables.EncodeReportState(state)
	var ms int64
	if until != nil {
		ms = until.UnixMilli()
	}
	return binary.BigEndian.AppendUint64(b, uint64(ms))
}

// repair is the relation's settle of a dead write of report id: its
// index rows settled, and, for a resolution (extra) whose state the
// report still holds, its action and its notification finished.
func (s *Service) repair(ctx context.Context, id weibo.ReportID, extra []byte) error {
	rep, err := s.settle(ctx, id)
	if err != nil || rep == nil || len(extra) != 17 {
		return err
	}
	state, ok := tables.DecodeReportState(extra[:9])
	if !ok || state != rep.state {
		return nil // changed since: the later write finishes its own
	}
	var until *time.Time
	if ms := int64(binary.BigEndian.Uint64(extra[9:])); ms != 0 {
		t := time.UnixMilli(ms)
		until = &t
	}
	return s.act(ctx, rep, until, notify.NoticeSync)
}

// act does the action of resolved report rep — the reported content
// deleted (DELETE_CONTENT), the target suspended until until
// (SUSPEND_USER) — and sends the reporter its REPORT_RESOLVED
// notification in mode, then steps StepActed. Each part is idempotent,
// so the repairer may do it again.
func (s *Service) act(ctx context.Context, rep *Report, until *time.Time, mode notify.NoticeMode) error {
	// A refusal (a *weibo.Error: the item gone, the user gone) is
	// logged, not retried: the resolution stands, and a marker that no
	// repair can finish would stay forever.
	refused := func(what string, err error) error {
		if weibo.CodeOf(err) == "" {
			return err
		}
		s.log.WarnContext(ctx, "report: action refused", "report", rep.ID.String(), "what", what, "err", err)
		return nil
	}
	switch {
	case rep.Action == nil:
	case *rep.Action == ActionDeleteContent:
		for _, p := range rep.Posts {
			if _, err := s.posts.DeletePost(ctx, p.ID); err != nil {
				if err := refused(p.ID.String(), err); err != nil {
					return err
				}
			}
		}
		for _, c := range rep.Comments {
			if _, err := s.comments.DeleteComment(ctx, c.ID.Author, c.ID); err != nil {
				if err := refused(c.ID.String(), err); err != nil {
					return err
				}
			}
		}
	case *rep.Action == ActionSuspendUser:
		reason := fmt.Sprintf("report %s", rep.ID)
		if rep.Note != nil {
			reason += ": " + *rep.Note
		}
		if err := s.suspend.Suspend(ctx, rep.Target, until, reason); err != nil {
			if err := refused("suspend "+rep.Target.String(), err); err != nil {
				return err
			}
		}
	}
	n := notify.Notice{Kind: tables.NotifReportResolved, Recipient: rep.Reporter, Actor: tables.NotifSystemActor,
		Subject: tables.ReportSubject(rep.ID, rep.ResolvedAtMillis), At: rep.ResolvedAtMillis}
	if err := s.notices.SendNotice(ctx, n, mode); err != nil {
		return err
	}
	return s.w.Step(ctx, StepActed)
}

// existing reads report id: NOT_FOUND on "id" when there is none.
func (s *Service) existing(ctx context.Context, id weibo.ReportID) (*Report, error) {
	rs, err := s.Get(ctx, []weibo.ReportID{id})
	if err != nil {
		return nil, err
	}
	if rs[0] == nil {
		return nil, weibo.NotFoundOn("id", fmt.Sprintf("report %s not found", id))
	}
	return rs[0], nil
}

// change writes cells into report rep's row with a CheckAndPut on the
// state it read, with state next (its version bumped); ok is false when
// the row changed since it was read.
func (s *Service) change(ctx context.Context, rep *Report, next tables.ReportStatus, cells map[string][]byte, proven func(hbase.Values) hbase.Values) (tables.ReportState, bool, error) {
	state := tables.ReportState{Status: next, Version: rep.state.Version + 1}
	cells[tables.ColReportState] = tables.EncodeReportState(state)
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Reports, Row: tables.ReportKey(rep.ID), Values: proven(hbase.Values{tables.FamReport: cells})},
		tables.FamReport, tables.ColReportState, tables.EncodeReportState(rep.state))
	return state, ok, err
}

// changeRounds bounds the retries of a change whose row keeps changing
// under it (assignments racing): BAD_USER_INPUT, reason
// CONCURRENT_UPDATE, beyond.
const changeRounds = 4

// errBusy is the error of a report that kept changing.
func errBusy(id weibo.ReportID) error {
	return weibo.BadReason("id", weibo.ReasonConcurrentUpdate, fmt.Sprintf("report %s kept changing; try again", id))
}

// Assign assigns report id to moderator (toSelf) or unassigns it, and
// returns it. It is not counted (the status stays) and is recorded in the
// audit log (report.assign). Errors: NOT_FOUND on "id"; BAD_USER_INPUT
// reason CONCURRENT_UPDATE when the report kept changing.
func (s *Service) Assign(ctx context.Context, moderator weibo.UserID, id weibo.ReportID, toSelf bool) (_ *Report, err error) {
	defer weibo.Wrapf(&err, "assign report %s", id)
	var to []byte
	if toSelf {
		to = tables.EncodeID(moderator)
	}
	for range changeRounds {
		rep, err := s.existing(ctx, id)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(tables.EncodeID(rep.Assignee), to) || (rep.Assignee == 0 && to == nil) {
			return rep, nil
		}
		rec, err := s.audit.Record(ctx, ActionAssign, ReportNode(id), assigneeJSON(rep.Assignee), assigneeJSON(weibo.UserID(tables.DecodeU64(to))), ReportProof(id))
		if err != nil {
			return nil, err
		}
		_, ok, err := s.change(ctx, rep, rep.state.Status, map[string][]byte{tables.ColReportAssignee: nonNil(to)}, rec.Proven)
		if err != nil {
			s.audit.Finish(ctx, rec, &err)
			return nil, err
		}
		if !ok {
			err := errBusy(id)
			s.audit.Finish(ctx, rec, &err) // refused before its commit: abandoned
			continue
		}
		rec.Commit()
		var serr error
		s.audit.Finish(ctx, rec, &serr)
		if serr != nil {
			return nil, serr
		}
		return s.read(ctx, id)
	}
	return nil, errBusy(id)
}

// nonNil is b, or an empty value for nil (an empty cell is none).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// assigneeJSON is an assignment as the audit log shows it.
func assigneeJSON(uid weibo.UserID) any {
	if uid == 0 {
		return map[string]any{"assignedTo": nil}
	}
	return map[string]any{"assignedTo": uid.String()}
}

// read reads report id, which exists.
func (s *Service) read(ctx context.Context, id weibo.ReportID) (*Report, error) {
	return s.existing(ctx, id)
}

// Resolve resolves OPEN report id with action and note (nil: none) and
// returns it; SUSPEND_USER suspends the target until suspendUntil (nil:
// until lifted). Exactly one of concurrent resolutions wins; the others
// get BAD_USER_INPUT reason REPORT_NOT_OPEN, as does a report not open.
// Errors: NOT_FOUND on "id"; BAD_USER_INPUT on "note" for a note not 1
// to MaxComment characters, on "suspendUntil" given without SUSPEND_USER
// or not in the future, on "action" for SUSPEND_USER without a
// Suspender; for SUSPEND_USER, the rank rule's refusal (SetRanks),
// before anything is written.
//
// Writes, in order: the marker (its extra bytes: the state it writes and
// suspendUntil); the counters' sequences; the pending audit event
// (report.resolve); the report row's CheckAndPut on the state read — the
// commit point: RESOLVED, the action, the note, the time, the event's
// proof —; OPEN -1 and RESOLVED +1; the index rows settled; the action
// (DELETE_CONTENT: the reported posts and comments still there deleted
// through their services, as their author's delete; SUSPEND_USER: the
// Suspender) and the reporter's REPORT_RESOLVED notification; the event
// listed; the marker's delete. A crash past the commit point leaves the
// marker, whose repair does what is left (the action, the notification)
// while the report still holds the state written.
func (s *Service) Resolve(ctx context.Context, moderator weibo.UserID, id weibo.ReportID, action Action, note *string, suspendUntil *time.Time) (_ *Report, err error) {
	defer weibo.Wrapf(&err, "resolve report %s", id)
	act, ok := byteOf(actions, action)
	if !ok {
		return nil, weibo.BadInput("action", "unknown action %q", action)
	}
	if note != nil && *note == "" {
		note = nil
	}
	if note != nil {
		if err := weibo.ValidateText(textRule("note"), *note); err != nil {
			return nil, err
		}
	}
	if suspendUntil != nil && action != ActionSuspendUser {
		return nil, weibo.BadInput("suspendUntil", "suspendUntil goes with SUSPEND_USER only")
	}
	if suspendUntil != nil && !suspendUntil.After(s.w.Now()) {
		return nil, weibo.BadInput("suspendUntil", "suspendUntil must be in the future")
	}
	if action == ActionSuspendUser && s.suspend == nil {
		return nil, weibo.BadInput("action", "SUSPEND_USER is not available")
	}
	for range changeRounds {
		rep, err := s.existing(ctx, id)
		if err != nil {
			return nil, err
		}
		if rep.Status != StatusOpen {
			return nil, weibo.BadReason("id", ReasonNotOpen, fmt.Sprintf("report %s is not open: resolved already", id))
		}
		if action == ActionSuspendUser && s.ranks != nil {
			if err := s.ranks.ActOn(ctx, moderator, rep.Target); err != nil {
				return nil, err
			}
		}
		now := s.w.NowMillis()
		next := tables.ReportState{Status: tables.ReportResolved, Version: rep.state.Version + 1}
		done, retry, err := s.resolveOnce(ctx, rep, act, note, suspendUntil, now, next)
		if !retry {
			return done, err
		}
	}
	return nil, errBusy(id)
}

// resolveOnce makes one attempt of Resolve on rep as read; retry is true
// when the row changed before the commit but is still open (the caller
// reads it again; err, a refusal, abandons the attempt's audit event).
func (s *Service) resolveOnce(ctx context.Context, rep *Report, act tables.ReportAction, note *string, until *time.Time, now int64, next tables.ReportState) (_ *Report, retry bool, err error) {
	op, err := s.w.BeginWith(ctx, s.rel, uint64(rep.ID), 0, resolveExtra(next, until))
	if err != nil {
		return nil, false, err
	}
	after := map[string]any{"status": StatusResolved, "action": actions[act], "note": note}
	if until != nil {
		after["suspendUntil"] = until.UTC().Format(time.RFC3339)
	}
	rec, err := s.audit.Record(ctx, ActionResolve, ReportNode(rep.ID), map[string]any{"status": rep.Status}, after, ReportProof(rep.ID))
	if err != nil {
		return nil, false, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	cells := map[string][]byte{tables.ColReportAction: {byte(act)}, tables.ColReportResolved: tables.EncodeMillis(now), tables.ColReportNote: {}}
	if note != nil {
		cells[tables.ColReportNote] = []byte(*note)
	}
	_, ok, err := s.change(ctx, rep, tables.ReportResolved, cells, rec.Proven)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		retry, err := s.undecided(ctx, op, rep.ID, StatusOpen,
			weibo.BadReason("id", ReasonNotOpen, fmt.Sprintf("report %s is not open: another moderator resolved it", rep.ID)))
		return nil, retry, err
	}
	rec.Commit()
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, false, err
	}
	if err := s.count(ctx, op, -1, +1); err != nil {
		return nil, false, err
	}
	cur, err := s.settle(ctx, rep.ID)
	if err != nil {
		return nil, false, err
	}
	if cur != nil && cur.state == next {
		if err := s.act(ctx, cur, until, notify.NoticeAdd); err != nil {
			return nil, false, err
		}
	}
	if err := s.audit.Settle(ctx, rec); err != nil {
		return nil, false, err
	}
	return cur, false, s.w.End(ctx, op)
}

// Reopen makes RESOLVED report id OPEN again and returns it: its action,
// note and resolution time are cleared (what the action did stays: the
// content deleted, the suspension, until lifted on its own). Recorded in
// the audit log (report.reopen). Errors: NOT_FOUND on "id";
// BAD_USER_INPUT reason REPORT_NOT_RESOLVED for a report that is open
// (a concurrent reopen included).
//
// Writes, as Resolve's without the action: the marker, the sequences, the
// pending event, the row's CheckAndPut on the state read, OPEN +1 and
// RESOLVED -1, the index rows settled, the event listed, the marker's
// delete.
func (s *Service) Reopen(ctx context.Context, moderator weibo.UserID, id weibo.ReportID) (_ *Report, err error) {
	defer weibo.Wrapf(&err, "reopen report %s", id)
	for range changeRounds {
		rep, err := s.existing(ctx, id)
		if err != nil {
			return nil, err
		}
		if rep.Status != StatusResolved {
			return nil, weibo.BadReason("id", ReasonNotResolved, fmt.Sprintf("report %s is open already", id))
		}
		done, retry, err := s.reopenOnce(ctx, rep)
		if !retry {
			return done, err
		}
	}
	return nil, errBusy(id)
}

// reopenOnce makes one attempt of Reopen on rep as read; retry as
// resolveOnce's.
func (s *Service) reopenOnce(ctx context.Context, rep *Report) (_ *Report, retry bool, err error) {
	op, err := s.w.Begin(ctx, s.rel, uint64(rep.ID), 0)
	if err != nil {
		return nil, false, err
	}
	before := map[string]any{"status": rep.Status, "action": rep.Action, "note": rep.Note}
	rec, err := s.audit.Record(ctx, ActionReopen, ReportNode(rep.ID), before, map[string]any{"status": StatusOpen}, ReportProof(rep.ID))
	if err != nil {
		return nil, false, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	empty := []byte{}
	_, ok, err := s.change(ctx, rep, tables.ReportOpen, map[string][]byte{
		tables.ColReportAction: empty, tables.ColReportNote: empty, tables.ColReportResolved: empty}, rec.Proven)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		retry, err := s.undecided(ctx, op, rep.ID, StatusResolved,
			weibo.BadReason("id", ReasonNotResolved, fmt.Sprintf("report %s is open: another moderator reopened it", rep.ID)))
		return nil, retry, err
	}
	rec.Commit()
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, false, err
	}
	if err := s.count(ctx, op, +1, -1); err != nil {
		return nil, false, err
	}
	cur, err := s.settle(ctx, rep.ID)
	if err != nil {
		return nil, false, err
	}
	if err := s.audit.Settle(ctx, rec); err != nil {
		return nil, false, err
	}
	return cur, false, s.w.End(ctx, op)
}

// undecided ends op, a status change of report id whose conditional write
// lost to a concurrent change: nothing to count or settle, the marker goes
// and the caller's audit event is abandoned (a refusal before the commit
// point). When the report no longer holds from, another moderator made the
// change: refusal. Otherwise retry is true (the caller reads it again),
// with errBusy for the caller's last attempt.
func (s *Service) undecided(ctx context.Context, op *counted.Op, id weibo.ReportID, from Status, refusal error) (retry bool, err error) {
	if err := s.w.End(ctx, op); err != nil {
		return false, err
	}
	cur, err := s.existing(ctx, id)
	if err != nil {
		return false, err
	}
	if cur.Status != from {
		return false, refusal
	}
	return true, errBusy(id)
}
