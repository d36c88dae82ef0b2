package org

import (
	"context"
	"encoding/json"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
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

// recorded is an audit event written ahead of its change.
type recorded struct {
	ev        *audit.Event
	committed bool // the change passed its commit point: the event stays
}

// record writes the audit event of a change about to be committed.
// before and after are marshalled to JSON (nil: null).
func (s *Service) record(ctx context.Context, action string, target weibo.NodeID, before, after any) (*recorded, error) {
	ev := &audit.Event{Action: action, Target: target, Before: jsonOf(before), After: jsonOf(after)}
	if err := s.audit.Record(ctx, ev); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, StepAuditRecorded); err != nil {
		return nil, err
	}
	return &recorded{ev: ev}, nil
}

// finish removes r's event when its change failed (err) before its commit
// point; called deferred by every recorded change.
func (s *Service) finish(ctx context.Context, r *recorded, err error) {
	if r == nil || err == nil || r.committed {
		return
	}
	if rerr := s.audit.Remove(context.WithoutCancel(ctx), r.ev); rerr != nil {
		s.log.WarnContext(ctx, "audit: an event of a failed change stays", "event", r.ev.ID, "err", rerr)
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

// AuditLog pages through the audit log newest first (audit.Log.Page).
// Errors: BAD_USER_INPUT for a bad filter or paging arguments.
func (s *Service) AuditLog(ctx context.Context, f audit.Filter, first *int, after *string) (*audit.EventConnection, error) {
	return s.audit.Page(ctx, f, first, after)
}

// roleNode, deptNode and userNode are the global ids of audit targets.
func roleNode(rid weibo.RoleID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeRole, Role: rid} }
func deptNode(did weibo.DeptID) weibo.NodeID {
	return weibo.NodeID{Kind: weibo.NodeDepartment, Dept: did}
}
func userNode(uid weibo.UserID) weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeUser, User: uid} }

// deptRef is a department as audit JSON names it: its global id, or null
// for none (the top level).
func deptRef(did weibo.DeptID) any {
	if did == weibo.RootDept {
		return nil
	}
	return did.String()
}
