package org

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The audit log. Every admin change of the organisation records an event
// (package audit): who (audit.Source of the request's context), what
// (the action), which object (the target) and its state before and after,
// as compact JSON. The log shows what happened, never an attempt: the
// event is written PENDING right before the change's commit point (no
// listing shows it), the change's commit write carries the event's proof
// cell into the change's authority row (Recorded.Proven, audit.Proof),
// and the change makes the event visible once committed (Settle, or
// Finish). A change refused before its commit point deletes its pending
// event; one that died (a killed gateway, a store error of unknown
// outcome) leaves it to the repairer (counted.Protocol.Repair, which runs
// audit.Log.ResolvePending past the repair grace) and to `gateway fsck`,
// which make it visible exactly when the proof says the change committed.

// The audit actions.
const (
	ActionRoleCreate        = "role.create"
	ActionRoleRename        = "role.rename"
	ActionRoleDelete        = "role.delete"
	ActionRoleAssign        = "role.assign"
	ActionRoleRevoke        = "role.revoke"
	ActionRolePermissions   = "role.setPermissions"
	ActionDeptCreate        = "department.create"
	ActionDeptRename        = "department.rename"
	ActionDeptMove          = "department.move"
	ActionDeptDelete        = "department.delete"
	ActionDeptSetMember     = "department.setMember"
	ActionDeptAddManager    = "department.addManager"
	ActionDeptRemoveManager = "department.removeManager"
)

// StepAuditRecorded is the step after a change's pending audit event is
// written (and its proof armed), before the change's commit point (the
// protocol's step hook, counted.WithStepHook).
const StepAuditRecorded = "audit:recorded"

// StepAuditVisible is the step after a committed change's event row is
// written (the event listed from then on), before its proof cell and
// pending row are deleted.
const StepAuditVisible = "audit:visible"

// Recorder writes the audit events of the organisation's changes and
// pages through them. It is safe for concurrent use.
type Recorder struct {
	log *audit.Log
	w   *counted.Protocol
}

// NewRecorder returns the recorder of the audit log over st, stamping
// events with w's clock and stepping w's step hook, and registers with w's
// repairer the resolution of pending events older than the repair grace
// (audit.Log.ResolvePending).
func NewRecorder(st hbase.Store, w *counted.Protocol) *Recorder {
	a := &Recorder{log: audit.New(st, w.Now), w: w}
	w.RegisterRepair(func(ctx context.Context, beforeMs int64) error {
		visible, deleted, err := a.log.ResolvePending(ctx, beforeMs)
		if visible+deleted > 0 {
			w.Logger().InfoContext(ctx, "repair: pending audit events", "visible", visible, "deleted", deleted)
		}
		return err
	})
	return a
}

// Log returns the audit log the recorder writes.
func (a *Recorder) Log() *audit.Log { return a.log }

// Recorded is a pending audit event of a change in progress.
type Recorded struct {
	p         *audit.PendingEvent
	committed bool // the change's commit write, with the proof, applied
	settled   bool // the event is visible (or deleted): nothing left to do
}

// Commit marks r's change as past its commit point: its commit write,
// which carried r's proof (Proven), was applied. The event is then made
// visible by Settle or Finish whatever the change's error.
func (r *Recorded) Commit() { r.committed = true }

// Proven returns v (the values of the change's commit write: a Put's or
// CheckAndPut's cells, or what a Delete or CheckAndDelete deletes) with
// r's proof cell added in its authority row, v itself unchanged. The
// authority row must be the write's. r may be nil: v is then returned.
func (r *Recorded) Proven(v hbase.Values) hbase.Values {
	if r == nil {
		return v
	}
	fam, q, val := r.p.Cell()
	if r.p.Proof.Deleted {
		val = nil
	}
	out := make(hbase.Values, len(v)+1)
	for f, cells := range v {
		out[f] = maps.Clone(cells)
	}
	if out[fam] == nil {
		out[fam] = map[string][]byte{}
	}
	out[fam][q] = val
	return out
}

// Record writes the pending audit event of a change about to be
// committed, whose commit write proves itself in proof's authority row
// (UserProof, RoleProof, DeptProof), then steps StepAuditRecorded. before
// and after are marshalled to JSON (nil: null). Errors are the store's or
// the step hook's.
func (a *Recorder) Record(ctx context.Context, action string, target weibo.NodeID, before, after any, proof audit.Proof) (*Recorded, error) {
	ev := &audit.Event{Action: action, Target: target, Before: jsonOf(before), After: jsonOf(after)}
	p, err := a.log.Begin(ctx, ev, proof)
	if err != nil {
		return nil, err
	}
	if err := a.w.Step(ctx, StepAuditRecorded); err != nil {
		return nil, err
	}
	return &Recorded{p: p}, nil
}

// Settle makes r's event visible, its change having succeeded: a change
// that succeeded without a commit write carrying the proof (it changed
// nothing) first proves itself (audit.Log.Prove); then the event's rows,
// with StepAuditVisible (audit.Log.Settle). A change with counted writes
// settles its event before it ends its markers. r may be nil. Errors are
// the store's or the step hook's; the repairer finishes the event then.
func (a *Recorder) Settle(ctx context.Context, r *Recorded) error {
	if r == nil || r.settled {
		return nil
	}
	if !r.committed {
		if err := a.log.Prove(ctx, r.p); err != nil {
			return err
		}
		r.committed = true
	}
	if err := a.log.Settle(ctx, r.p, func(ctx context.Context) error { return a.w.Step(ctx, StepAuditVisible) }); err != nil {
		return err
	}
	r.settled = true
	return nil
}

// Finish ends r's event when its change returns *errp; called deferred
// by every recorded change. A change that succeeded, or that was refused
// (BAD_USER_INPUT, NOT_FOUND, FORBIDDEN) past its commit point, settles
// its event (Settle); one refused before it abandons it (deleted); any
// other error (the store's, whose outcome may be unknown; a killed call)
// leaves the pending event to the repairer, which decides from the
// change's authority row. r may be nil. A settle that fails after a
// success becomes the change's error (*errp): the change committed, its
// event is left to the repairer; a failed abandon is logged.
func (a *Recorder) Finish(ctx context.Context, r *Recorded, errp *error) {
	if r == nil || r.settled {
		return
	}
	err := *errp
	switch code := weibo.CodeOf(err); {
	case err == nil || (r.committed && refused(code)):
		if serr := a.Settle(context.WithoutCancel(ctx), r); serr != nil && err == nil {
			*errp = serr
		}
	case refused(code):
		if aerr := a.log.Abandon(context.WithoutCancel(ctx), r.p); aerr != nil {
			a.w.Logger().WarnContext(ctx, "audit: a refused change's pending event is left to the repairer", "event", r.p.Entry.ID.String(), "err", aerr)
		} else {
			r.settled = true
		}
	}
}

// refused reports whether an error code says the change was refused
// (not an outage of unknown outcome).
func refused(code string) bool {
	return code == weibo.CodeBadUserInput || code == weibo.CodeNotFound || code == weibo.CodeForbidden
}

// UserProof is the proof of a change whose authority is user uid's row
// (family o: roles, department, managed departments); deleted says the
// commit deletes there (audit.Proof).
func UserProof(uid weibo.UserID, deleted bool) audit.Proof {
	return audit.Proof{Table: tables.Users, Row: tables.UserKey(uid), Family: tables.FamOrg, Deleted: deleted}
}

// RoleProof is the proof of a change whose authority is role rid's row
// (family i).
func RoleProof(rid weibo.RoleID, deleted bool) audit.Proof {
	return audit.Proof{Table: tables.Roles, Row: tables.RoleKey(rid), Family: tables.FamInfo, Deleted: deleted}
}

// DeptProof is the proof of a change whose authority is department did's
// row (family i).
func DeptProof(did weibo.DeptID, deleted bool) audit.Proof {
	return audit.Proof{Table: tables.Departments, Row: tables.DeptKey(did), Family: tables.FamInfo, Deleted: deleted}
}

// jsonOf marshals v to compact JSON, "" for nil.
func jsonOf(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Page pages through the audit log newest first (audit.Log.Page).
// Errors: BAD_USER_INPUT for a bad filter or paging arguments.
func (a *Recorder) Page(ctx context.Context, f audit.Filter, first *int, after *string) (*audit.EventConnection, error) {
	return a.log.Page(ctx, f, first, after)
}

// RoleNode is role rid's global id.
func RoleNode(rid weibo.RoleID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeRole, Role: rid} }

// DeptNode is department did's global id.
func DeptNode(did weibo.DeptID) weibo.NodeID {
	return weibo.NodeID{Kind: weibo.NodeDepartment, Dept: did}
}

// UserNode is user uid's global id.
func UserNode(uid weibo.UserID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeUser, User: uid} }

// DeptRef is a department as audit JSON names it: its global id, or nil
// (null) for none (the top level).
func DeptRef(did weibo.DeptID) any {
	if did == weibo.RootDept {
		return nil
	}
	return did.String()
}
