package org

import (
	"context"
	"encoding/json"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted"
)

// The audit log. Every admin change of the organisation records an event
// (package audit): who (audit.Source of the request's context), what
// (the action), which object (the target) and its state before and after,
// as compact JSON. The event is written ahead of the change, right before
// the change's commit point, so that no change is acknowledged — or even
// committed — without its event; a change refused or failed before its
// commit point removes its event again. A gateway killed between the two
// leaves an event of a change that did not happen: the log errs on the
// side of recording attempts, never of losing a change.

// The audit actions.
const (
	ActionRoleCreate        = "role.create"
	ActionRoleRename        = "role.rename"
	ActionRoleDelete        = "role.delete"
	ActionRoleAssign        = "role.assign"
	ActionRoleRevoke        = "role.revoke"
	ActionDeptCreate        = "department.create"
	ActionDeptRename        = "department.rename"
	ActionDeptMove          = "department.move"
	ActionDeptDelete        = "department.delete"
	ActionDeptSetMember     = "department.setMember"
	ActionDeptAddManager    = "department.addManager"
	ActionDeptRemoveManager = "department.removeManager"
)

// StepAuditRecorded is the step after a change's audit event is written,
// before the change (the protocol's step hook, counted.WithStepHook).
const StepAuditRecorded = "audit:recorded"

// Recorder writes the audit events of the organisation's changes and
// pages through them. It is safe for concurrent use.
type Recorder struct {
	log *audit.Log
	w   *counted.Protocol
}

// NewRecorder returns the recorder of the audit log over st, stamping
// events with w's clock and stepping w's step hook after each event.
func NewRecorder(st hbase.Store, w *counted.Protocol) *Recorder {
	return &Recorder{log: audit.New(st, w.Now), w: w}
}

// Recorded is an audit event written ahead of its change.
type Recorded struct {
	ev        *audit.Event
	committed bool // the change passed its commit point: the event stays
}

// Commit marks r's change as past its commit point: Finish keeps its
// event whatever the change's error.
func (r *Recorded) Commit() { r.committed = true }

// Record writes the audit event of a change about to be committed, then
// steps StepAuditRecorded. before and after are marshalled to JSON (nil:
// null). Errors are the store's or the step hook's.
func (a *Recorder) Record(ctx context.Context, action string, target weibo.NodeID, before, after any) (*Recorded, error) {
	ev := &audit.Event{Action: action, Target: target, Before: jsonOf(before), After: jsonOf(after)}
	if err := a.log.Record(ctx, ev); err != nil {
		return nil, err
	}
	if err := a.w.Step(ctx, StepAuditRecorded); err != nil {
		return nil, err
	}
	return &Recorded{ev: ev}, nil
}

// Finish removes r's event when its change failed (err) before its commit
// point; called deferred by every recorded change. r may be nil. A failed
// removal is logged, not returned: the event then stays.
func (a *Recorder) Finish(ctx context.Context, r *Recorded, err error) {
	if r == nil || err == nil || r.committed {
		return
	}
	if rerr := a.log.Remove(context.WithoutCancel(ctx), r.ev); rerr != nil {
		a.w.Logger().WarnContext(ctx, "audit: an event of a failed change stays", "event", r.ev.ID, "err", rerr)
	}
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
