package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// MaxNodes is the most ids Query.nodes takes (BAD_USER_INPUT beyond).
const MaxNodes = 100

// loadNode asks the request's dataloader of id's type for the object and
// returns the thunk that waits for it: a nil Node when there is none. The
// loads of one level start before any thunk waits, so each type costs one
// batched read. A role, a department or a notification needs a viewer:
// without one the thunk returns UNAUTHENTICATED, as role(id:) and
// department(id:) do; a notification is the viewer's own (another's is
// none); a report the viewer's own, or any for a moderator (reportNode).
func (r *Resolver) loadNode(ctx context.Context, id weibo.NodeID) func() (weibo.Node, error) {
	l := loaders.For(ctx)
	switch id.Kind {
	case weibo.NodeUser:
		return nodeThunk(l.Users().Load(ctx, id.User))
	case weibo.NodePost:
		// As post(id:): none across a block, either way.
		return nodeThunk(l.VisiblePosts().Load(ctx, id.Post))
	case weibo.NodeComment:
		return nodeThunk(l.Comments().Load(ctx, id.Comment))
	case weibo.NodeTopic:
		return nodeThunk(l.Topics().Load(ctx, id.Topic))
	case weibo.NodeMedia:
		if r.Svc.Media == nil {
			return func() (weibo.Node, error) { return nil, nil }
		}
		return nodeThunk(l.Media(r.Svc.Media.Get).Load(ctx, id.Media.String()))
	}
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return func() (weibo.Node, error) { return nil, err }
	}
	if id.Kind == weibo.NodeNotification {
		if id.Notification.Recipient != viewer {
			return func() (weibo.Node, error) { return nil, nil } // someone else's: none
		}
		return nodeThunk(l.Notifications().Load(ctx, id.Notification))
	}
	if id.Kind == weibo.NodeReport {
		return r.reportNode(ctx, id.Report) // the viewer's own, or any for a moderator
	}
	if id.Kind == weibo.NodeRole {
		return nodeThunk(l.Roles().Load(ctx, id.Role))
	}
	return nodeThunk(l.Departments().Load(ctx, id.Dept))
}

// nodeThunk adapts a dataloader thunk of *T to one of Node, turning a nil
// *T into a nil Node (not a Node holding a nil pointer).
func nodeThunk[T any, PT interface {
	*T
	weibo.Node
}](thunk func() (PT, error)) func() (weibo.Node, error) {
	return func() (weibo.Node, error) {
		v, err := thunk()
		if err != nil || v == nil {
			return nil, err
		}
		return v, nil
	}
}

// awaitNodes waits for the thunks of Query.nodes: a thunk's error becomes
// an error at its index of the list, whose entry is then null.
func awaitNodes(ctx context.Context, thunks []func() (weibo.Node, error)) []weibo.Node {
	out := make([]weibo.Node, len(thunks))
	for i, thunk := range thunks {
		n, err := thunk()
		if err != nil {
			path := append(slices.Clone(graphql.GetPath(ctx)), ast.PathIndex(i))
			graphql.AddError(ctx, &gqlerror.Error{Err: err, Message: err.Error(), Path: path})
			continue
		}
		out[i] = n
	}
	return out
}

// totalCount returns the kept counter count picks from u's users row when
// the current connection field selects totalCount, and 0 otherwise: a user
// read in full already carries it; one built from a post's author is read
// through the dataloader.
func totalCount(ctx context.Context, u *weibo.User, count func(*weibo.User) int64) (int, error) {
	if !selectsAny(ctx, selections(ctx), func(n string) bool { return n == "totalCount" }) {
		return 0, nil
	}
	u, err := complete(ctx, u)
	if err != nil {
		return 0, err
	}
	return int(count(u)), nil
}
