package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// afterBlockChange makes the rest of the request see a block or unblock
// of target by viewer: the viewer's Set is read anew when a field asks,
// and the rows of both users (their followCount and fanCount change with
// the follows a block ends) are read again with one GetMany and become
// the request's answer for them. It returns target (NOT_FOUND when gone
// since).
func (r *Resolver) afterBlockChange(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error) {
	l := loaders.For(ctx)
	l.ForgetSafetySet()
	us, err := r.Svc.Accounts.GetUsers(ctx, []weibo.UserID{target, viewer})
	if err != nil {
		return nil, err
	}
	l.SetUser(target, us[0])
	l.SetUser(viewer, us[1])
	if us[0] == nil {
		return nil, &weibo.Error{Code: weibo.CodeNotFound, Message: "user " + target.String() + " not found"}
	}
	return us[0], nil
}
