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
// its two writes. The pairs that also carry a counter (user ↔ role and
// department ↔ member, each with a memberCount) are written on the
// counted-write protocol besides, so that concurrent calls and crashes
// cannot leave them wrong: see package counted and packages role and
// membership.

// Steps of two-row changes, passed to the protocol's step hook
// (counted.WithStepHook). Each names the point after the change's first
// write and before its second; a name is its value's words: StepRoleCreate
// is "role:create".
const (
	StepRoleCreate              = "role:create"              // after the name index row, before the role row
	StepRoleRename              = "role:rename"              // after the new name's index row, before the role row
	StepRoleDelete              = "role:delete"              // after the role row is deleted, before its members and name
	StepRoleAssign              = "role:assign"              // after the role's member row, before the user's cell
	StepRoleRevoke              = "role:revoke"              // after the user's cell is deleted, before the member row
	StepDepartmentCreate        = "department:create"        // after the parent's child row, before the department row
	StepDepartmentMove          = "department:move"          // after the new parent's child row, before the department's parent
	StepDepartmentDelete        = "department:delete"        // after the department row is deleted, before the parent's child row
	StepDepartmentSetMember     = "department:setMember"     // after the department's member row, before the user's cell
	StepDepartmentAddManager    = "department:addManager"    // after the department's manager row, before the user's cell
	StepDepartmentRemoveManager = "department:removeManager" // after the user's cell is deleted, before the manager row
)

// Steps of the counted writes (a role assignment, relation "role"; a
// department membership, relation "department"), passed to the protocol's
// step hook: the protocol's own, named "<relation>:marked", ":sequenced"
// and ":counted" (counted.Protocol.Begin and Count).
const (
	StepRoleMarked          = "role:marked"          // after the pending row of an assign or revoke
	StepRoleSequenced       = "role:sequenced"       // after the role's operation sequence
	StepRoleCounted         = "role:counted"         // after the member counter, before the member row is settled
	StepDepartmentMarked    = "department:marked"    // after the pending row of a membership change
	StepDepartmentSequenced = "department:sequenced" // after the department's operation sequence
	StepDepartmentCounted   = "department:counted"   // after the member counter, before the member row is settled
)

// The counted relations' names, which prefix their protocol steps.
const (
	RelationRole       = "role"
	RelationDepartment = "department"
)

// StaleGrace is how old an index row without its authority must be
// before a write treats it as debris of a failed change rather than a
// change in progress (fsck takes its own grace).
const StaleGrace = 10 * time.Second

// PutLink writes a link row of weibo:departments (a child, member or
// manager row: the dependent side of its pair), made at ms.
func PutLink(ctx context.Context, st hbase.Store, key []byte, ms int64) error {
	return st.Put(ctx, &hbase.Put{Table: tables.Departments, Row: key, Values: tables.LinkValues(ms)})
}

// DeleteLink deletes a link row of weibo:departments.
func DeleteLink(ctx context.Context, st hbase.Store, key []byte) error {
	return st.Delete(ctx, &hbase.Delete{Table: tables.Departments, Row: key})
}
