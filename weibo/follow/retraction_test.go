package follow_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/tables"
)

// gate holds the first call that reaches it (once armed) until released.
// It is safe for concurrent use.
type gate struct {
	mu      sync.Mutex
	armed   bool
	reached chan struct{} // closed when the held call arrives
	release chan struct{} // closed to let it go on
}

// arm makes the next call of pass wait; it returns the gate's reached and
// release channels.
func (g *gate) arm() (reached <-chan struct{}, release chan<- struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.reached, g.release = true, make(chan struct{}), make(chan struct{})
	return g.reached, g.release
}

// pass returns at once unless the gate is armed; the first call of an
// armed gate waits for its release (or ctx's end).
func (g *gate) pass(ctx context.Context) error {
	g.mu.Lock()
	if !g.armed {
		g.mu.Unlock()
		return nil
	}
	g.armed = false
	reached, release := g.reached, g.release
	g.mu.Unlock()
	close(reached)
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatedStore holds the first Scan of one table and prefix (set with at)
// at its gate.
type gatedStore struct {
	hbase.StoreAdmin
	mu     sync.Mutex
	table  string
	prefix []byte
	g      gate
}

// at arms the gate for the next Scan of table with prefix.
func (s *gatedStore) at(table string, prefix []byte) (<-chan struct{}, chan<- struct{}) {
	s.mu.Lock()
	s.table, s.prefix = table, prefix
	s.mu.Unlock()
	return s.g.arm()
}

// disarm takes back the gate's arming, if no call has reached it.
func (s *gatedStore) disarm() {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.g.armed = false
}

// Scan waits at the gate when it is the scan the gate is armed for.
func (s *gatedStore) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	s.mu.Lock()
	match := sc.Table == s.table && bytes.Equal(sc.Prefix, s.prefix)
	s.mu.Unlock()
	if match {
		if err := s.g.pass(ctx); err != nil {
			return err
		}
	}
	return s.StoreAdmin.Scan(ctx, sc, fn)
}

// retractionRace is the setup of the races of an unfollow with the
// delete of one of the followee's posts: a domain over a gated store, on
// a clock of its own, started, whose step hook fails follow.StepFans once
// crash is set and else holds it at step once armed; a follower a of
// author b, and a post of b's fanned out into a's inbox.
type retractionRace struct {
	svc   *domain.Domain
	st    *gatedStore
	step  *gate
	crash atomic.Bool // the next follow.StepFans fails with countedtest.ErrCrash
	clock domaintest.Clock
	a, b  weibo.UserID
	post  weibo.PostID
}

func newRetractionRace(t *testing.T, backend testenv.Backend) *retractionRace {
	ctx := t.Context()
	r := &retractionRace{st: &gatedStore{StoreAdmin: domaintest.OwnStore(t, backend)}, step: &gate{}}
	r.svc = domaintest.Quiet(r.st, r.clock.Option(), domain.WithStepHook(func(ctx context.Context, step string) error {
		if step != follow.StepFans {
			return nil
		}
		if r.crash.CompareAndSwap(true, false) {
			return countedtest.ErrCrash
		}
		return r.step.pass(ctx)
	}))
	if err := r.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.svc.Close(context.Background()) })
	r.a = domaintest.MustUser(t, r.svc, domaintest.Uniq("fan")).ID
	r.b = domaintest.MustUser(t, r.svc, domaintest.Uniq("author")).ID
	if _, err := r.svc.Follows.Follow(ctx, r.a, r.b); err != nil {
		t.Fatal(err)
	}
	p, err := r.svc.Feed.Publish(ctx, r.b, "soon gone")
	if err != nil {
		t.Fatal(err)
	}
	r.post = p.ID
	if err := r.svc.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	if n := domaintest.InboxHas(t, r.svc, r.a, r.post); n != 1 {
		t.Fatalf("the fan-out left %d entries of the post in the fan's inbox, want 1", n)
	}
	return r
}

// unfollow starts a's unfollow of b and returns the channel of its error.
func (r *retractionRace) unfollow(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r.svc.Follows.Unfollow(ctx, r.a, r.b)
		done <- err
	}()
	return done
}

// held waits until the unfollow has reached its gate; it fails the test
// if the unfollow ends first.
func (r *retractionRace) held(t *testing.T, reached <-chan struct{}, unfollowed <-chan error) {
	t.Helper()
	select {
	case <-reached:
	case err := <-unfollowed:
		t.Fatalf("the unfollow ended (%v) without reaching its gate", err)
	}
}

// delete deletes the post and, if wait, waits for its retraction.
func (r *retractionRace) delete(t *testing.T, wait bool) {
	t.Helper()
	ok, err := r.svc.Feed.DeletePost(t.Context(), r.post)
	if err != nil || !ok {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if wait {
		if err := r.svc.FlushFanout(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// check takes the unfollow's result and waits for the retraction, then
// wants no entry of the deleted post in the ex-fan's inbox, no marker left
// and fsck finding nothing.
func (r *retractionRace) check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unfollow: %v", err)
	}
	if err := r.svc.FlushFanout(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := domaintest.InboxHas(t, r.svc, r.a, r.post); n != 0 {
		t.Errorf("the ex-fan's inbox keeps %d entries of the deleted post %s", n, r.post)
	}
	if n := domaintest.Leftovers(t, r.svc.Store()); n != 0 {
		t.Errorf("%d markers left", n)
	}
	rep, err := fsck.Run(t.Context(), r.svc, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) != 0 {
		t.Errorf("fsck: %+v", rep.Issues)
	}
}

// TestUnfollowRacesRetraction runs, on both backends, an unfollow held
// right after it removed the fans row (follow.StepFans, before it takes
// the followee's posts out of the follower's inbox) while the followee
// deletes a post and the delete's retraction runs to its end: the
// retraction no longer finds the follower among the fans, and the
// unfollow, let go, no longer finds the post among the followee's posts
// nor its delete in flight. The follower's entry of the post must go all
// the same.
func TestUnfollowRacesRetraction(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			r := newRetractionRace(t, b)
			reached, release := r.step.arm()
			unfollowed := r.unfollow(t.Context())
			r.held(t, reached, unfollowed)
			r.delete(t, true)
			close(release)
			r.check(t, <-unfollowed)
		})
	}
}

// TestUnfollowReadsBetweenDelete runs, on both backends, the delete of a
// post between the two reads of an unfollow's removal of the followee's
// posts from the follower's inbox: the unfollow held at its scan of the
// followee's posts, the delete made (the content row gone, its marker
// there) and its retraction held at its scan of the fans, the unfollow
// let go to its end, then the retraction. The unfollow's scan no longer
// names the post, the retraction's no longer names the follower; the
// follower's entry of the post must go all the same.
func TestUnfollowReadsBetweenDelete(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			r := newRetractionRace(t, b)
			ctx := t.Context()
			reached, release := r.st.at(tables.Content, tables.ContentPrefix(r.b))
			unfollowed := r.unfollow(ctx)
			r.held(t, reached, unfollowed)
			// The unfollow is held at its scan: the next scan to hold is
			// the retraction's of the fans.
			retractReached, retractRelease := r.st.at(tables.Relations, tables.RelationPrefix(r.b, tables.Fans))
			r.delete(t, false)
			<-retractReached
			close(release)
			err := <-unfollowed
			close(retractRelease)
			r.check(t, err)
		})
	}
}

// TestDeadUnfollowRacesRetraction runs, on both backends, an unfollow
// killed right after it removed the fans row (follow.StepFans: the
// followee's posts still in the follower's inbox), then the delete of one
// of them, whose retraction is held between its scan of the fans (the
// follower gone) and its read of the follow pairs in flight; meanwhile
// the follower follows again (the post is gone: no backfill of it) and
// the repairer settles the dead unfollow from the attends row, now a
// follow. Then the retraction goes on, finding no write of the pair in
// flight. The follower's entry of the post must go all the same.
func TestDeadUnfollowRacesRetraction(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			r := newRetractionRace(t, b)
			ctx := t.Context()
			r.crash.Store(true)
			if _, err := r.svc.Follows.Unfollow(ctx, r.a, r.b); !errors.Is(err, countedtest.ErrCrash) {
				t.Fatalf("unfollow: %v, want the crash", err)
			}
			// The dead unfollow's marker is past the repair grace, the
			// delete's, made after, is not.
			r.clock.Advance(2 * counted.DefaultRepairGrace)
			reached, release := r.st.at(tables.Pending, nil)
			r.delete(t, false)
			retracted := make(chan error, 1)
			go func() { retracted <- r.svc.FlushFanout(ctx) }()
			held := true
			select {
			case <-reached:
			case err := <-retracted: // the retraction ended with no read to hold
				r.st.disarm()
				held = false
				retracted <- err
			}
			if _, err := r.svc.Follows.Follow(ctx, r.a, r.b); err != nil {
				t.Fatal(err)
			}
			if _, err := r.svc.Writes.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if n := domaintest.Leftovers(t, r.svc.Store()); held && n != 1 {
				t.Fatalf("%d markers left, want the held delete's alone", n)
			}
			close(release)
			if err := <-retracted; err != nil {
				t.Fatal(err)
			}
			r.check(t, nil)
		})
	}
}
