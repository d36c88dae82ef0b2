package weibo

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Writes that no crash leaves wrong for good.
//
// HBase has no cross-row transactions, and a gateway may be killed between
// any two writes. Three kinds of write change a two-sided pair together
// with an Increment counter, and each is made safe the same way:
//
//	write                 authority (decides)      dependents (settled)            counters
//	follow / unfollow     attends row A→B          fans row B←A, B's posts in      A's followCount,
//	                                               A's inbox (backfill window)     B's fanCount
//	assign / revoke role  users o:<rid> of U       roles member row (rid, U)       the role's memberCount
//	publish               content row              inbox rows (fan-out)            the author's postCount
//
//  1. A marker is written first: a weibo:pending row (follow, role) or the
//     weibo:outbox row (publish), holding the time the write started.
//  2. The operation sequence of every counter the write may change is
//     Incremented (tables.ColFollowsSeq and friends), before any counted
//     row changes.
//  3. The authority is changed with one conditional write (CheckAndPut or
//     CheckAndDelete), which decides whether this call changes the pair, so
//     concurrent and repeated calls count once.
//  4. The counters are Incremented, only if the call changed the pair and
//     only while the write is younger than half the repair grace (the
//     budget); a write past its budget leaves the counting to the repairer.
//  5. The dependents are settled (settleFollow, settleRole, the fan-out's
//     settleFanout): written for the authority's state, then the authority
//     is read again, and again written and read until the read agrees with
//     what was written. Whatever the interleaving, the last write to a
//     dependent row is then made for the authority's final state: a writer
//     whose writes land after the authority's last change reads that change
//     afterwards and goes round again. (The fan-out reads the fans rows
//     first and the attends rows only of fans whose fans row went: a
//     follow pair's settle writes its fans row before its inbox rows, see
//     settleFanout.)
//  6. The marker is deleted (for a publish: marked counted, and deleted by
//     the fan-out once it is done).
//
// A crash or an error anywhere leaves the marker. The repairer (Repair, run
// at start-up and with every outbox sweep) takes every marker older than
// the repair grace as the trace of a dead write: it settles the pair
// again from its authority and recounts the counters, then deletes the
// marker. A recount is exact because it is conditional: it reads the
// counter's sequence, checks that no marker younger than the grace names
// the counter (a live write between its steps 1 and 6), counts, and writes
// the count with CheckAndPut on the sequence it read. A write that starts
// after the sequence was read bumps it (step 2), so the Put fails and the
// counter is recounted at the next pass; a write that started before has
// its marker seen, or is finished, or is past its budget and will not
// Increment. Recounts never race Increments, so counters are exact once
// writes quiesce and the repairer has run.

// Steps of the counted writes, passed to the hook of WithPairWriteHook
// (fault injection in tests: an error there aborts the write at that
// point, as a crash would). Each names the point after the step's write.
const (
	StepRelationMarked    = "relation:marked"    // after the pending row of a follow or unfollow
	StepRelationSequenced = "relation:sequenced" // after the two operation sequences
	StepRelationDecided   = "relation:attends"   // after the attends row's CheckAndPut/CheckAndDelete
	StepRelationCounted   = "relation:counted"   // after the two counters
	StepRelationFans      = "relation:fans"      // in every settle of a follow pair: after the fans row, before the inbox
	StepRelationInbox     = "relation:inbox"     // in every settle of a follow pair: after the inbox, before the re-read
	StepRoleMarked        = "role:marked"        // after the pending row of an assignRole or revokeRole
	StepRoleSequenced     = "role:sequenced"     // after the role's operation sequence
	StepRoleCounted       = "role:counted"       // after the member counter, before the member row is settled
	StepPublishOutbox     = "publish:outbox"     // after the outbox row
	StepPublishSequenced  = "publish:sequenced"  // after the author's operation sequence
	StepPublishContent    = "publish:content"    // after the content row
	StepPublishCounted    = "publish:counted"    // after the own inbox row and the post counter, before the outbox row is marked counted
	StepFanoutWritten     = "fanout:written"     // after one batch of a fan-out's inbox rows, before their re-check
)

// settleRounds bounds the write-and-re-read rounds of one settle. The
// authority flipping this often means other writes are settling it too;
// the caller then keeps its marker and the repairer settles it later.
const settleRounds = 8

// errUnsettled is the error of a settle whose authority kept changing.
var errUnsettled = errors.New("weibo: the pair kept changing while it was settled")

// graceMillis is the repair grace in ms.
func (s *Service) graceMillis() int64 { return s.opts.repairGrace.Milliseconds() }

// pendingOp is the marker of one counted write in flight: its weibo:pending
// row, or for a publish its outbox row.
type pendingOp struct {
	key   []byte
	start int64 // ms, the writing process's clock
	keep  bool  // leave the marker for the repairer
}

// beginOp writes the weibo:pending row of a write of kind on (owner,
// other), with a random nonce so that concurrent writes of one pair keep
// their own rows.
func (s *Service) beginOp(ctx context.Context, kind tables.PendingKind, owner, other uint64) (*pendingOp, error) {
	op := &pendingOp{key: tables.PendingKey(kind, owner, other, rand.Uint64()), start: s.nowMillis()}
	return op, s.st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: op.key,
		Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: tables.U64(uint64(op.start))}}})
}

// inBudget reports whether op may still Increment its counters itself: it
// started less than half the repair grace ago, so the repairer, which
// waits the whole grace, does not take it for dead.
func (s *Service) inBudget(op *pendingOp) bool {
	return s.nowMillis()-op.start < s.graceMillis()/2
}

// keepOp leaves op's marker for the repairer: it writes the row again (the
// repairer may have taken a write this slow for dead and deleted it) with
// the original start time and any extra cells, and keeps it at endOp.
func (s *Service) keepOp(ctx context.Context, op *pendingOp, extra map[string][]byte) error {
	op.keep = true
	vals := map[string][]byte{tables.ColPendingAt: tables.U64(uint64(op.start))}
	for q, v := range extra {
		vals[q] = v
	}
	return s.st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: op.key, Values: hbase.Values{tables.FamPending: vals}})
}

// endOp deletes op's marker unless it is kept.
func (s *Service) endOp(ctx context.Context, op *pendingOp) error {
	if op.keep {
		return nil
	}
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Pending, Row: op.key})
}

// increments runs incs concurrently and returns their new values in order.
func (s *Service) increments(ctx context.Context, incs ...*hbase.Increment) ([]int64, error) {
	out := make([]int64, len(incs))
	if len(incs) == 1 {
		v, err := s.st.Increment(ctx, incs[0])
		out[0] = v
		return out, err
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, inc := range incs {
		g.Go(func() (err error) {
			out[i], err = s.st.Increment(gctx, inc)
			return err
		})
	}
	return out, g.Wait()
}

// --- counters -----------------------------------------------------------------

// CounterKind names one of the counters the domain keeps with Increment.
type CounterKind int

// The counters.
const (
	// FollowCount is a user's followCount: their attends rows.
	FollowCount CounterKind = iota
	// FanCount is a user's fanCount: their fans rows whose attends row exists.
	FanCount
	// PostCount is a user's postCount: their content rows.
	PostCount
	// MemberCount is a role's memberCount: its member rows whose user holds
	// the role (users o:<rid>).
	MemberCount
)

// String returns the counter's GraphQL field name.
func (k CounterKind) String() string {
	return [...]string{"followCount", "fanCount", "postCount", "memberCount"}[k]
}

// Counter names one counter: its kind and its owner, a UserID for
// FollowCount, FanCount and PostCount, a RoleID for MemberCount.
type Counter struct {
	// Kind is which counter.
	Kind CounterKind
	// Owner is the id of the user or role that holds it.
	Owner uint64
}

// cell returns the table, row, counter qualifier and sequence qualifier of
// c (family tables.FamCount in both tables).
func (c Counter) cell() (table string, row []byte, qual, seq string) {
	switch c.Kind {
	case FollowCount:
		return tables.Users, tables.UserKey(UserID(c.Owner)), tables.ColFollows, tables.ColFollowsSeq
	case FanCount:
		return tables.Users, tables.UserKey(UserID(c.Owner)), tables.ColFans, tables.ColFansSeq
	case PostCount:
		return tables.Users, tables.UserKey(UserID(c.Owner)), tables.ColPosts, tables.ColPostsSeq
	default:
		return tables.Roles, tables.RoleKey(RoleID(c.Owner)), tables.ColMemberCount, tables.ColMemberSeq
	}
}

// seqIncrement is the Increment of c's operation sequence (step 2 of a
// counted write).
func (c Counter) seqIncrement() *hbase.Increment {
	table, row, _, seq := c.cell()
	return &hbase.Increment{Table: table, Row: row, Family: tables.FamCount, Qualifier: seq, Amount: 1}
}

// increment is the Increment of c by d.
func (c Counter) increment(d int64) *hbase.Increment {
	table, row, qual, _ := c.cell()
	return &hbase.Increment{Table: table, Row: row, Family: tables.FamCount, Qualifier: qual, Amount: d}
}

// Recount is the outcome of recounting one counter.
type Recount struct {
	// Done tells that the counter now holds the count (or its owner no
	// longer exists); false means a write was in flight and the counter
	// was left for a later pass.
	Done bool
	// Before is the counter's value when read; After the count written.
	Before, After int64
}

// RecountCounters sets each counter of cs to a recount of the rows it
// counts (see CounterKind) — unless a write that may change it is in
// flight, a weibo:pending or unmarked weibo:outbox row younger than the
// repair grace naming it, or one starts meanwhile: then that counter is
// left as it is (Done false) for a later pass. The write is a CheckAndPut
// on the counter's operation sequence as read before counting, so it never
// overwrites an Increment it did not count. One entry per counter, in
// order. Errors are the store's.
func (s *Service) RecountCounters(ctx context.Context, cs []Counter) ([]Recount, error) {
	out := make([]Recount, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	// 1. The sequences and values, before anything is counted.
	gets := make([]*hbase.Get, len(cs))
	for i, c := range cs {
		table, row, _, _ := c.cell()
		gets[i] = &hbase.Get{Table: table, Row: row, Families: []string{tables.FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	// 2. Writes in flight (markers younger than the grace).
	busy, err := s.busyCounters(ctx)
	if err != nil {
		return nil, err
	}
	// 3. Count, and write the count if the sequence is unchanged.
	for i, c := range cs {
		if busy[c] {
			continue
		}
		table, row, qual, seq := c.cell()
		out[i].Before = int64(tables.DecodeU64(rs[i].Value(tables.FamCount, qual)))
		n, exists, err := s.count(ctx, c)
		if err != nil {
			return nil, err
		}
		if !exists {
			out[i].Done = true
			continue
		}
		// Increments write at max(now, the cell's timestamp + 1), so a busy
		// counter's cell can be ahead of the clock: write past it, or the
		// count would be an older version, hidden under the cell.
		put := &hbase.Put{Table: table, Row: row, Values: hbase.Values{tables.FamCount: {qual: tables.U64(uint64(n))}}}
		if c := rs[i].Cell(tables.FamCount, qual); c != nil {
			put.Timestamp = c.Timestamp + 1
		}
		ok, err := s.st.CheckAndPut(ctx, put, tables.FamCount, seq, rs[i].Value(tables.FamCount, seq))
		if err != nil {
			return nil, err
		}
		out[i] = Recount{Done: ok, Before: out[i].Before, After: n}
		if ok && n != out[i].Before {
			s.log.Info("repair: counter corrected", "counter", c.Kind.String(), "owner", c.Owner, "was", out[i].Before, "now", n)
		}
	}
	return out, nil
}

// busyCounters returns the counters named by a marker younger than the
// repair grace: a weibo:pending row, or a weibo:outbox row not marked
// counted. Both tables hold only the writes in flight (and the traces of
// dead ones), so each is read with one scan.
func (s *Service) busyCounters(ctx context.Context) (map[Counter]bool, error) {
	young := s.nowMillis() - s.graceMillis()
	busy := map[Counter]bool{}
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		kind, owner, other, _, ok := tables.DecodePendingKey(r.Row)
		if !ok || int64(tables.DecodeU64(r.Value(tables.FamPending, tables.ColPendingAt))) < young {
			return nil
		}
		switch kind {
		case tables.PendingFollow:
			busy[Counter{FollowCount, owner}] = true
			busy[Counter{FanCount, other}] = true
		case tables.PendingRole:
			busy[Counter{MemberCount, owner}] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		id, ok := tables.DecodeOutboxKey(r.Row)
		if ok && r.Value(tables.FamOutbox, tables.ColOutboxCounted) == nil &&
			int64(tables.DecodeU64(r.Value(tables.FamOutbox, tables.ColOutboxAt))) >= young {
			busy[Counter{PostCount, uint64(id.Author)}] = true
		}
		return nil
	})
	return busy, err
}

// count counts the rows counter c counts; exists is false when its owner
// (the user or role row) does not exist.
func (s *Service) count(ctx context.Context, c Counter) (n int64, exists bool, err error) {
	switch c.Kind {
	case MemberCount:
		rs, err := s.GetRoles(ctx, []RoleID{RoleID(c.Owner)})
		if err != nil || rs[0] == nil {
			return 0, false, err
		}
	default:
		us, err := s.GetUsers(ctx, []UserID{UserID(c.Owner)})
		if err != nil || us[0] == nil {
			return 0, false, err
		}
	}
	switch c.Kind {
	case FollowCount:
		n, err = s.countRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(UserID(c.Owner), tables.Attends)}, nil)
	case FanCount:
		uid := UserID(c.Owner)
		n, err = s.countRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, tables.Fans)},
			func(r *hbase.Result) *hbase.Get {
				_, _, fan, ok := tables.DecodeRelationKey(r.Row)
				if !ok {
					return nil
				}
				return &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, uid)}
			})
	case PostCount:
		n, err = s.countRows(ctx, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(UserID(c.Owner)), Families: []string{tables.FamPost}}, nil)
	case MemberCount:
		n, err = s.countMembers(ctx, RoleID(c.Owner))
	}
	return n, true, err
}

// countRows counts the rows of sc; with verify, only those whose Get
// (batched, one GetMany per s.opts.batch rows) finds a row.
func (s *Service) countRows(ctx context.Context, sc *hbase.Scan, verify func(*hbase.Result) *hbase.Get) (int64, error) {
	var n int64
	var gets []*hbase.Get
	check := func() error {
		if len(gets) == 0 {
			return nil
		}
		rs, err := s.st.GetMany(ctx, gets)
		for _, r := range rs {
			if r.Exists() {
				n++
			}
		}
		gets = gets[:0]
		return err
	}
	err := s.st.Scan(ctx, sc, func(r *hbase.Result) error {
		if verify == nil {
			n++
			return nil
		}
		if g := verify(r); g != nil {
			if gets = append(gets, g); len(gets) >= s.opts.batch {
				return check()
			}
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	return n, err
}

// countMembers counts the member rows of rid whose user's cell o:<rid> exists.
func (s *Service) countMembers(ctx context.Context, rid RoleID) (int64, error) {
	qual := tables.RoleQualifier(rid)
	var n int64
	var gets []*hbase.Get
	check := func() error {
		if len(gets) == 0 {
			return nil
		}
		rs, err := s.st.GetMany(ctx, gets)
		for _, r := range rs {
			if r.Value(tables.FamOrg, qual) != nil {
				n++
			}
		}
		gets = gets[:0]
		return err
	}
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Roles, Prefix: tables.RoleMemberPrefix(rid)}, func(r *hbase.Result) error {
		if _, uid, ok := tables.DecodeRoleMemberKey(r.Row); ok {
			if gets = append(gets, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}); len(gets) >= s.opts.batch {
				return check()
			}
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	return n, err
}

// --- settling pairs ---------------------------------------------------------

// settleFollow makes the rows that depend on whether a follows b agree
// with a's attends row, the authority: the fans row b←a, and b's posts in
// a's inbox (b's newest posts up to the backfill limit while following —
// none when b is large: home timelines merge them —, every post of b once
// not). It writes them for the state it knows (state,
// as the caller just wrote or read the attends row; nil to read it), reads
// the attends row again, and repeats until the read agrees with what it
// wrote, at most settleRounds times. It returns the state it settled on;
// errUnsettled when the row kept changing (the writes that change it
// settle it themselves). Every write is an idempotent Put or Delete.
// Each round writes the fans row before the inbox: settleFanout relies on
// that order.
func (s *Service) settleFollow(ctx context.Context, a, b UserID, state *bool) (bool, error) {
	key := tables.RelationKey(a, tables.Attends, b)
	var following bool
	if state != nil {
		following = *state
	} else {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: key})
		if err != nil {
			return false, err
		}
		following = r.Exists()
	}
	for range settleRounds {
		fans := tables.RelationKey(b, tables.Fans, a)
		var err error
		if following {
			err = s.st.Put(ctx, &hbase.Put{Table: tables.Relations, Row: fans,
				Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.U64(uint64(s.nowMillis()))}}})
		} else {
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Relations, Row: fans})
		}
		if err == nil {
			err = s.pairStep(ctx, StepRelationFans)
		}
		if err == nil {
			if following {
				// Read after the fans row is written: a drain of b that
				// starts later finds a among the fans (large.go).
				var large bool
				if large, err = s.isLarge(ctx, b); err == nil && !large {
					err = s.backfill(ctx, a, b)
				}
			} else {
				err = s.unbackfill(ctx, a, b)
			}
		}
		if err == nil {
			err = s.pairStep(ctx, StepRelationInbox)
		}
		if err != nil {
			return following, err
		}
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: key})
		if err != nil {
			return following, err
		}
		if r.Exists() == following {
			return following, nil
		}
		following = r.Exists()
	}
	return following, errUnsettled
}

// RepairFollow settles the follow pair a → b from a's attends row (see
// settleFollow): the fans row and b's posts in a's inbox are made to agree
// with it. It is what the repairer does for a dead follow or unfollow, and
// what `gateway fsck --repair` does for an asymmetric pair or inbox.
// Errors are the store's, or an error saying that the pair kept changing.
func (s *Service) RepairFollow(ctx context.Context, a, b UserID) error {
	_, err := s.settleFollow(ctx, a, b, nil)
	return err
}

// settleRole makes the member row (rid, uid) agree with the user's cell
// o:<rid>, the authority: present with the cell's priority, or absent. It
// writes it for cell (the caller's knowledge; known false reads it), reads
// the cell again, and repeats until they agree (at most settleRounds times;
// errUnsettled otherwise).
func (s *Service) settleRole(ctx context.Context, uid UserID, rid RoleID, cell []byte, known bool) error {
	read := func() ([]byte, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		return r.Value(tables.FamOrg, tables.RoleQualifier(rid)), err
	}
	if !known {
		var err error
		if cell, err = read(); err != nil {
			return err
		}
	}
	for range settleRounds {
		member := tables.RoleMemberKey(rid, uid)
		var err error
		if cell != nil {
			err = s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: member, Values: hbase.Values{tables.FamInfo: {tables.ColPriority: cell}}})
		} else {
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: member})
		}
		if err != nil {
			return err
		}
		now, err := read()
		if err != nil {
			return err
		}
		if bytes.Equal(now, cell) {
			return nil
		}
		cell = now
	}
	return errUnsettled
}

// RepairRoleMember settles the member row of user uid in role rid from the
// user's cell (see settleRole). Errors are the store's, or an error saying
// that the cell kept changing.
func (s *Service) RepairRoleMember(ctx context.Context, uid UserID, rid RoleID) error {
	return s.settleRole(ctx, uid, rid, nil, false)
}

// fanoutsBefore reports whether author has a fan-out in weibo:outbox
// requested before bound (ms): one prefix scan of the author's outbox rows.
func (s *Service) fanoutsBefore(ctx context.Context, author UserID, bound int64) (bool, error) {
	found := false
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox, Prefix: tables.ContentPrefix(author)}, func(r *hbase.Result) error {
		if _, ok := tables.DecodeOutboxKey(r.Row); ok && int64(tables.DecodeU64(r.Value(tables.FamOutbox, tables.ColOutboxAt))) < bound {
			found = true
			return hbase.ErrStopScan
		}
		return nil
	})
	return found, err
}

// --- the repairer ---------------------------------------------------------------

// RepairReport counts what one repair pass did.
type RepairReport struct {
	// Dead is the number of weibo:pending rows older than the grace found.
	Dead int
	// Repaired is how many of them were settled, recounted and deleted.
	Repaired int
}

// Repair runs one pass of the repairer over weibo:pending: every row older
// than the repair grace is the trace of a follow, unfollow, assignRole or
// revokeRole that died (or outlived its budget). For each, it settles the
// pair from its authority (RepairFollow, RepairRoleMember) — for a follow
// pair only once no fan-out of the followee that the write may have raced
// is left in the outbox — then recounts the counters the write may have
// changed (RecountCounters) — unless the write had counted and was kept
// only for the fan-outs it raced (tables.ColPendingCounted) — and deletes
// the row once both are done; what cannot be done yet is left for the
// next pass. Dead publishes are the
// fan-out's (see fanout.go). Start runs a pass, and then one every outbox
// sweep; it is safe to run in several gateways at once. Errors are the
// store's.
func (s *Service) Repair(ctx context.Context) (RepairReport, error) {
	var rep RepairReport
	now := s.nowMillis()
	type mark struct {
		key          []byte
		kind         tables.PendingKind
		owner, other uint64
		bound        int64 // follow pairs: outbox rows of other before this must be gone
		counted      bool  // the write's counters are exact: no recount
	}
	var dead []mark
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		kind, owner, other, _, ok := tables.DecodePendingKey(r.Row)
		at := int64(tables.DecodeU64(r.Value(tables.FamPending, tables.ColPendingAt)))
		if !ok || now-at <= s.graceMillis() {
			return nil
		}
		m := mark{key: bytes.Clone(r.Row), kind: kind, owner: owner, other: other, bound: at + s.graceMillis()}
		if v := r.Value(tables.FamPending, tables.ColPendingFanouts); v != nil {
			m.bound = int64(tables.DecodeU64(v))
		}
		m.counted = r.Value(tables.FamPending, tables.ColPendingCounted) != nil
		dead = append(dead, m)
		return nil
	})
	if err != nil || len(dead) == 0 {
		return rep, err
	}
	rep.Dead = len(dead)
	// Settle each pair once.
	type pair struct {
		kind         tables.PendingKind
		owner, other uint64
	}
	settled := map[pair]bool{}
	for _, m := range dead {
		p := pair{m.kind, m.owner, m.other}
		if _, done := settled[p]; done {
			continue
		}
		settled[p] = false
		switch m.kind {
		case tables.PendingFollow:
			busy, err := s.fanoutsBefore(ctx, UserID(m.other), m.bound)
			if err != nil {
				return rep, err
			}
			if busy {
				continue
			}
			err = s.RepairFollow(ctx, UserID(m.owner), UserID(m.other))
			if errors.Is(err, errUnsettled) {
				continue
			} else if err != nil {
				return rep, err
			}
		case tables.PendingRole:
			err := s.RepairRoleMember(ctx, UserID(m.other), RoleID(m.owner))
			if errors.Is(err, errUnsettled) {
				continue
			} else if err != nil {
				return rep, err
			}
		}
		settled[p] = true
	}
	// Recount the counters of the settled pairs, except those whose every
	// dead write counted (an unfollow kept only for the fan-outs it raced).
	recount := map[pair]bool{}
	for _, m := range dead {
		if !m.counted {
			recount[pair{m.kind, m.owner, m.other}] = true
		}
	}
	idx := map[Counter]int{}
	var cs []Counter
	counters := func(p pair) []Counter {
		if p.kind == tables.PendingFollow {
			return []Counter{{FollowCount, p.owner}, {FanCount, p.other}}
		}
		return []Counter{{MemberCount, p.owner}}
	}
	for p, ok := range settled {
		if !ok || !recount[p] {
			continue
		}
		for _, c := range counters(p) {
			if _, seen := idx[c]; !seen {
				idx[c] = len(cs)
				cs = append(cs, c)
			}
		}
	}
	res, err := s.RecountCounters(ctx, cs)
	if err != nil {
		return rep, err
	}
	var dels []*hbase.Delete
	for _, m := range dead {
		p := pair{m.kind, m.owner, m.other}
		if !settled[p] {
			continue
		}
		done := true
		for _, c := range counters(p) {
			if recount[p] {
				done = done && res[idx[c]].Done
			}
		}
		if done {
			dels = append(dels, &hbase.Delete{Table: tables.Pending, Row: m.key})
		}
	}
	if len(dels) > 0 {
		if err := s.st.DeleteMany(ctx, dels); err != nil {
			return rep, err
		}
	}
	rep.Repaired = len(dels)
	if rep.Dead > 0 {
		s.log.Info("repair: dead writes", "found", rep.Dead, "repaired", rep.Repaired)
	}
	return rep, nil
}
