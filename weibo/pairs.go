package weibo

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Two-row changes. Roles and departments store every relation on both
// sides, as seed 001 does, and HBase has no cross-row transactions, so each
// pair has one AUTHORITATIVE side, the one reads trust, and one INDEX side
// that lists the relation and that reads check against the authority (one
// batched GetMany per page, see readPage) and skip when they disagree:
//
//	pair                  authoritative (written last)      index (written first)
//	user ↔ role           users o:<rid> (and the role row)   roles member row
//	role ↔ name           roles i:n                          rolenames row
//	parent ↔ child        departments i:up of the child      departments child row
//	department ↔ member   users o:dp                         departments member row
//
// Adding writes the index first and the authority last (the commit point);
// removing deletes the authority first and the index last. So a change that
// dies half-way only ever leaves an extra index row: reads skip it, a
// repeated call finishes or overwrites it, and `gateway fsck --repair`
// (package fsck) removes it. Every two-row change says its write order in
// its doc comment and calls pairStep between its two writes. The pairs
// that also carry a counter (user ↔ role with memberCount, and the follow
// pairs) are written with a marker and settled after the commit point
// besides, so that concurrent calls and crashes cannot leave them wrong:
// see repair.go.

// Steps of two-row changes, passed to the hook of WithPairWriteHook. Each
// names the point after the change's first write and before its second.
const (
	PairStepCreateRole        = "createRole"        // after the name index row, before the role row
	PairStepRenameRole        = "renameRole"        // after the new name's index row, before the role row
	PairStepDeleteRole        = "deleteRole"        // after the role row is deleted, before its members and name
	PairStepAssignRole        = "assignRole"        // after the role's member row, before the user's cell
	PairStepRevokeRole        = "revokeRole"        // after the user's cell is deleted, before the member row
	PairStepCreateDepartment  = "createDepartment"  // after the parent's child row, before the department row
	PairStepMoveDepartment    = "moveDepartment"    // after the new parent's child row, before the department's parent
	PairStepDeleteDepartment  = "deleteDepartment"  // after the department row is deleted, before the parent's child row
	PairStepSetUserDepartment = "setUserDepartment" // after the department's member row, before the user's cell
)

// WithPairWriteHook installs a fault-injection hook for tests: fn is called
// between the first and the second write of every two-row change of roles
// and departments, with the name of the step (the PairStep* constants), and
// between the steps of every counted write (the Step* constants of
// repair.go: follow, unfollow, assignRole, revokeRole, publish, fan-out);
// an error it returns aborts the change at that point, as a crash would. It
// exists to test that reads tolerate half-written pairs and that the
// repairer and fsck repair them; production code never sets it.
func WithPairWriteHook(fn func(ctx context.Context, step string) error) Option {
	return func(o *options) { o.pairHook = fn }
}

// pairStep runs the WithPairWriteHook hook, if any, at step.
func (s *Service) pairStep(ctx context.Context, step string) error {
	if s.opts.pairHook != nil {
		return s.opts.pairHook(ctx, step)
	}
	return nil
}

// staleGrace is how old an index row without its authoritative side must
// be before a write treats it as debris of a failed change rather than a
// change in progress (fsck takes its own grace).
const staleGrace = 10 * time.Second

// putLink writes a link row of weibo:departments (a child or member row:
// the index side of its pair), made at ms.
func (s *Service) putLink(ctx context.Context, key []byte, ms int64) error {
	return s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: key, Values: tables.LinkValues(ms)})
}

// deleteLink deletes a link row of weibo:departments.
func (s *Service) deleteLink(ctx context.Context, key []byte) error {
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: key})
}
