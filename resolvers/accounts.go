package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// The account mutations and the token's hold on subscriptions. Ending a
// token writes the users row (the truth for every gateway instance) and
// then tells this instance's Issuer, which refuses the token here at once
// and closes its subscriptions.

// changePassword changes the viewer's password, ends the viewer's older
// tokens here, and returns a new token.
func (r *Resolver) changePassword(ctx context.Context, current, next string) (*model.AuthPayload, error) {
	viewer := viewerOf(ctx)
	u, err := r.Svc.Accounts.ChangePassword(ctx, viewer, current, next)
	if err != nil {
		return nil, err
	}
	r.Tokens.EndedAll(viewer, u.TokenGeneration)
	loaders.For(ctx).SetUser(viewer, u)
	return r.authPayload(u)
}

// logout ends the token of the request.
func (r *Resolver) logout(ctx context.Context) (bool, error) {
	tok, ok := auth.ViewerToken(ctx)
	if !ok {
		return false, weibo.ErrUnauthenticated // a viewer trusted without a token
	}
	all, gen, err := r.Svc.Accounts.EndToken(ctx, tok.User, tok.ID, tok.Expires)
	if err != nil {
		return false, err
	}
	if all {
		r.Tokens.EndedAll(tok.User, gen)
	} else {
		r.Tokens.Ended(tok)
	}
	return true, nil
}

// logoutEverywhere ends every token of the viewer.
func (r *Resolver) logoutEverywhere(ctx context.Context) (bool, error) {
	viewer := viewerOf(ctx)
	gen, err := r.Svc.Accounts.EndAllTokens(ctx, viewer)
	if err != nil {
		return false, err
	}
	r.Tokens.EndedAll(viewer, gen)
	return true, nil
}

// updateProfile changes the viewer's profile; the request's later reads
// of the viewer see the new row.
func (r *Resolver) updateProfile(ctx context.Context, displayName, bio *string) (*weibo.User, error) {
	viewer := viewerOf(ctx)
	u, err := r.Svc.Accounts.UpdateProfile(ctx, viewer, displayName, bio)
	if err != nil {
		return nil, err
	}
	loaders.For(ctx).SetUser(viewer, u)
	return u, nil
}

// profileText returns the profile text field of u (loaded through the
// user dataloader when u is a post's denormalized author): null when not
// set ("").
func profileText(ctx context.Context, u *weibo.User, field func(*weibo.User) string) (*string, error) {
	u, err := complete(ctx, u)
	if err != nil {
		return nil, err
	}
	if s := field(u); s != "" {
		return &s, nil
	}
	return nil, nil
}

// tokenRecheck is how often an open subscription checks its token again
// while the bus is away (auth.Issuer.Recheck: a users-row read at most once
// per recheck window, 10 s, per token).
const tokenRecheck = 2 * time.Second

// whileTokenValid runs a subscription's source, start, for as long as the
// token of ctx's viewer stays good: it checks the token when the
// subscription starts, at once when an instance ends it (this one, or
// another sharing the bus when EndingsOverBus), and when it expires. While
// the bus is connected it reads nothing more; while the bus is away (or
// without a bus given) it checks the token again every tokenRecheck (an
// ending on another instance is then seen within its recheck window), and
// the first check that finds the bus back reads the users row afresh, for
// the endings the bus missed. An ended or expired token closes the
// subscription with an error whose extensions.code is UNAUTHENTICATED; a
// store error of a recheck leaves it open until the next one.
//
// start returns the source's channel and, when not nil, a function saying
// why the channel closed: a *weibo.Error (SLOW_CONSUMER) then ends the
// subscription with that error. One goroutine forwards the source; with a
// push transport's live.Sink in ctx it also delivers each value
// (live.Out), so that no other goroutine waits on the subscription.
//
// Under a push transport (a live.Sink in ctx) while the bus carries token
// endings, the source delivers itself and the token is watched without a
// goroutine (watchPushed): start's poll hook, which sources that read
// while the bus is away call before each read, then does the rechecks. In
// the goroutine's way start gets no hook (nil).
func whileTokenValid[T any](ctx context.Context, r *Resolver, start func(ctx context.Context, poll func(busUp bool)) (<-chan T, func() error, error)) (<-chan T, error) {
	check := loaders.FreshCheck(r.Svc.Accounts)
	// The bus's state is taken before each check: a bus that goes away
	// after it closes gap, and the subscription checks again.
	busState := func() (<-chan struct{}, bool) {
		gap, up := r.Svc.Timeline.BusState()
		return gap, up && r.EndingsOverBus
	}
	gap, pushed := busState()
	recheck := func() error {
		var err error
		if pushed {
			err = r.Tokens.RecheckNow(ctx, check)
		} else {
			err = r.Tokens.Recheck(ctx, check)
		}
		if err != nil {
			pushed = false // check again at the next tick
		}
		return err
	}
	if err := recheck(); err != nil {
		return nil, err
	}
	if pushed && live.SinkOf(ctx) != nil {
		return watchPushed(ctx, r, check, start)
	}
	ended, stopWatch := r.Tokens.Watch(ctx)
	inner, cancel := context.WithCancel(live.WithSink(ctx, nil)) // this goroutine delivers, not the source
	in, why, err := start(inner, nil)
	if err != nil {
		stopWatch()
		cancel()
		return nil, err
	}
	out := live.NewOut[T](ctx)
	go func() {
		defer out.Close(nil) // a failed source's error is given by endSubscription
		defer cancel()
		defer stopWatch()
		tick := time.NewTicker(tokenRecheck)
		defer tick.Stop()
		var expires <-chan time.Time
		if t, ok := auth.ViewerToken(ctx); ok {
			timer := time.NewTimer(time.Until(t.Expires))
			defer timer.Stop()
			expires = timer.C
		}
		for {
			var ticks <-chan time.Time
			var away <-chan struct{}
			if pushed {
				away = gap // nil for a bus that is never interrupted
			} else {
				ticks = tick.C
			}
			var err error
			select {
			case v, ok := <-in:
				if !ok {
					if why == nil {
						return
					}
					if e, ok := errors.AsType[*weibo.Error](why()); ok {
						endSubscription(ctx, e) // the source failed
					}
					return
				}
				select {
				case out.C <- v:
					out.Sent()
				case <-ctx.Done():
					return
				}
				continue
			case <-ended:
				ended = nil
				err = r.Tokens.Recheck(ctx, check) // ended: refused without a read
			case <-expires:
				err = r.Tokens.Recheck(ctx, check) // expired: refused without a read
			case <-ticks:
				gap, pushed = busState()
				err = recheck()
			case <-away:
				gap, pushed = busState()
				err = recheck()
			case <-ctx.Done():
				return
			}
			if e, ok := errors.AsType[*weibo.Error](err); ok && e.Code == weibo.CodeUnauthenticated {
				endSubscription(ctx, e)
				return
			}
		}
	}()
	return out.C, nil
}

// endSubscription makes the transport end the subscription of ctx with e
// (a graphql-transport-ws "error" message, extensions.code e.Code and,
// when set, extensions.reason e.Reason) once its channel closes: a push
// transport's sink presents e itself; gqlgen's transport sends the error
// it is given. Were a transport without subscription errors to run one,
// the error is left out rather than panic.
func endSubscription(ctx context.Context, e *weibo.Error) {
	if sink := live.SinkOf(ctx); sink != nil {
		sink.Fail(e)
		return
	}
	gerr := &gqlerror.Error{Message: e.Message, Extensions: map[string]any{"code": e.Code}}
	if e.Reason != "" {
		gerr.Extensions["reason"] = e.Reason
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		gerr.Path = fc.Path()
	}
	defer func() { _ = recover() }() // no subscription error context: nothing to add to
	transport.AddSubscriptionError(ctx, gerr)
}
