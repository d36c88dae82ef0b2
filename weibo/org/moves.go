package org

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
)

// The authorization of a move decided with the move. Who may move a user
// depends on the department the user is in (a manager moves only users of
// the departments they manage), so the decision is made against the
// department the move's conditional write expects: a concurrent move
// between the check and the write makes that write fail, and the next
// attempt decides again against the department the user is then in.

// MoveGuard decides whether a move of a user may be made from department
// from — the user's department as the attempt read it, which its
// conditional write of users o:dp expects (weibo.RootDept: none) —: nil
// allows it, an error (FORBIDDEN) refuses it and is the move's answer.
// membership.Service.SetGuarded runs it before each attempt's writes;
// authz.Service.Guard makes it.
type MoveGuard func(ctx context.Context, from weibo.DeptID) error

// MoveDecision is the authorization of one user's move, as decided
// before the move (authz.Service.Moves).
type MoveDecision struct {
	// User is the user moved.
	User weibo.UserID
	// From is the user's department the decision was made against
	// (weibo.RootDept: none).
	From weibo.DeptID
	// Err is nil when the move is allowed from From, and the FORBIDDEN
	// *weibo.Error otherwise.
	Err error
}
