package resolvers

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/org"
)

// changeSuspension runs one of suspendUser and unsuspendUser on the user
// named by the argument userId, after the checks both make: not the
// viewer themselves (BAD_USER_INPUT), and the rank rule (Org.Authz.ActOn:
// FORBIDDEN). It returns the user as they are after the change.
func (r *Resolver) changeSuspension(ctx context.Context, userID string, change func(target weibo.UserID) error) (*weibo.User, error) {
	target, err := parseID[weibo.UserID]("userId", userID)
	if err != nil {
		return nil, err
	}
	viewer := viewerOf(ctx)
	if target == viewer {
		return nil, weibo.BadInput("userId", "you cannot suspend or unsuspend yourself")
	}
	if err := r.Svc.Org.Authz.ActOn(ctx, viewer, target); err != nil {
		return nil, err
	}
	if err := change(target); err != nil {
		return nil, err
	}
	return loadUser(ctx, target)
}

// suspendUser is Mutation.suspendUser.
func (r *Resolver) suspendUser(ctx context.Context, userID string, until *time.Time, reason *string) (*weibo.User, error) {
	return r.changeSuspension(ctx, userID, func(target weibo.UserID) error {
		why := ""
		if reason != nil {
			why = *reason
		}
		_, err := r.Svc.Suspensions.Suspend(ctx, target, until, why)
		return err
	})
}

// unsuspendUser is Mutation.unsuspendUser.
func (r *Resolver) unsuspendUser(ctx context.Context, userID string) (*weibo.User, error) {
	return r.changeSuspension(ctx, userID, func(target weibo.UserID) error {
		return r.Svc.Suspensions.Unsuspend(ctx, target)
	})
}

// userSuspension is User.suspension: the suspension in force, from
// memory (no store call for a user not suspended), shown to the user and
// to the holders of the permission to suspend; null to others.
func (r *Resolver) userSuspension(ctx context.Context, u *weibo.User) (*suspend.Suspension, error) {
	sp := r.Svc.Suspensions.Of(u.ID)
	if sp == nil {
		return nil, nil
	}
	viewer, ok, err := auth.ViewerIfAny(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if viewer == u.ID {
		return sp, nil
	}
	if ok, err := viewerSees(ctx, u.ID, org.PermManageUsers); err != nil || !ok {
		return nil, err
	}
	return sp, nil
}
