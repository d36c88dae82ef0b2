package org

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Two-row changes. Roles and departments store every relation on both
// sides, as seed 001 does, and HBase has no cross-row transactions, so each
// pair has one AUTHORITY, the side reads trust, and one DEPENDENT side
// that lists the relation and that reads check against the authority (one
// batched GetMany per page, see paging.Read) and skip when they disagree:
//
//	pair                  authority (written last)          dependent (written first)
//	user ↔ role           users o:<rid> (and the role row)   roles member row
//	role ↔ name           roles i:n                          rolenames row
//	parent ↔ child        departments i:up of the child      departments child row
//	department ↔ member   users o:dp                         departments member row
//	department ↔ manager  users o:g<did>                     departments manager row
//
// Adding writes the dependent first and the authority last (the commit
// point); removing deletes the authority first and the dependent last. So a
// change that dies half-way only ever leaves an extra dependent row: reads
// skip it, a repeated call finishes or overwrites it, and `gateway fsck
// --repair` (package fsck) removes it. Every two-row change says its write
// order in its doc comment and runs the protocol's step hook (Step) between
// its two writes. The pair that also carries a counter (user ↔ role with
// memberCount) is written on the counted-write protocol besides, so that
// concurrent calls and crashes cannot leave it wrong: see package counted
// and counted.go.

// Steps of two-row changes, passed to the protocol's step hook
// (counted.WithStepHook). Each names the point after the change's first
// write and before its second.
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
	PairStepAddManager        = "addManager"        // after the department's manager row, before the user's cell
	PairStepRemoveManager     = "removeManager"     // after the user's cell is deleted, before the manager row
)

// staleGrace is how old an index row without its authority must
// be before a write treats it as debris of a failed change rather than a
// change in progress (fsck takes its own grace).
const staleGrace = 10 * time.Second

// putLink writes a link row of weibo:departments (a child or member row:
// the dependent side of its pair), made at ms.
func (s *Service) putLink(ctx context.Context, key []byte, ms int64) error {
	return s.st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: key, Values: tables.LinkValues(ms)})
}

// deleteLink deletes a link row of weibo:departments.
func (s *Service) deleteLink(ctx context.Context, key []byte) error {
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: key})
}
