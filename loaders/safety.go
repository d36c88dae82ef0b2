package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"
	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/safety"
)

// SafetySet returns the request's viewer's Set (blocks both ways, mutes,
// filters), read with one Get of the viewer's safety row the first time a
// field of the request asks and kept for the rest of it: a page of users
// answering blockedByViewer, blocksViewer and mutedByViewer reads it once,
// not once per user. Without a viewer it is nil (a nil Set hides nothing)
// and nothing is read. Errors are the store's.
func (l *Loaders) SafetySet(ctx context.Context) (*safety.Set, error) {
	viewer, ok := auth.OptionalViewer(ctx)
	if !ok {
		return nil, nil
	}
	// smu is held across the read, so that the fields of one level asking
	// at once make one read between them.
	l.smu.Lock()
	defer l.smu.Unlock()
	if l.safetyRead && l.safetyOwner == viewer {
		return l.safetySet, nil
	}
	set, err := l.svc.Safety.SetOf(ctx, viewer)
	if err != nil {
		return nil, err
	}
	l.safetySet, l.safetyOwner, l.safetyRead = set, viewer, true
	return set, nil
}

// ForgetSafetySet drops the Set SafetySet kept: a block, mute or filter
// change of the request makes the fields after it read the Set anew.
func (l *Loaders) ForgetSafetySet() {
	l.smu.Lock()
	l.safetySet, l.safetyRead = nil, false
	l.smu.Unlock()
}

// VisiblePosts returns the request's loader of posts as its viewer sees
// them (node and nodes): a post whose author a block stands between with
// the viewer, either way, is nil, as a post that does not exist. Its batch
// is one GetMany of the posts and the viewer's safety row
// (feed.Service.PostsFor).
func (l *Loaders) VisiblePosts() *dataloader.Loader[weibo.PostID, *feed.Post] {
	return made(&l.lmu, &l.ldVisiblePosts, func() dataloader.BatchFunc[weibo.PostID, *feed.Post] {
		return batch(func(ctx context.Context, ids []weibo.PostID) ([]*feed.Post, error) {
			viewer, _ := auth.OptionalViewer(ctx)
			return l.svc.Feed.PostsFor(ctx, viewer, ids)
		})
	})
}
