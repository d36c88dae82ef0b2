package provision_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/tables"
)

// errKilled is the error of a step a killed process reaches.
var errKilled = errors.New("killed at a step")

// killer is a step hook that records the steps a call reaches, or kills
// the call at one: that step and every one after fail, as nothing runs
// in a killed process.
type killer struct {
	mu   sync.Mutex
	kill string
	dead bool
	seen []string
}

func (k *killer) hook(_ context.Context, step string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return errKilled
	}
	if !slices.Contains(k.seen, step) {
		k.seen = append(k.seen, step)
	}
	if step == k.kill {
		k.dead = true
		return errKilled
	}
	return nil
}

// open builds a started domain over st; behind sets its clock back (a
// crashed process's markers are then past the repair grace for a
// process on the real clock), hook is its step hook (nil: none).
func open(t *testing.T, st hbase.Store, behind time.Duration, hook func(context.Context, string) error) *domain.Domain {
	t.Helper()
	clock := new(domaintest.Clock)
	clock.Advance(-behind)
	opts := []domain.Option{domain.WithBcryptCost(4), domain.WithOutboxSweep(0), clock.Option(),
		domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if hook != nil {
		opts = append(opts, domain.WithStepHook(hook))
	}
	d := domain.New(st, opts...)
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// crashCase is one call the crash test kills at each of its steps.
type crashCase struct {
	name string
	// setup prepares the call on a healthy domain and returns its state.
	setup func(t *testing.T, d *domain.Domain, tag string) any
	// do is the call.
	do func(ctx context.Context, d *domain.Domain, state any) error
	// verify checks, after the repair, that the call happened whole or
	// not at all.
	verify func(t *testing.T, d *domain.Domain, state any)
}

// TestCrashAtEachStep kills each provisioning call at every step it
// reaches, on both backends; after a restart's fsck repair the store is
// clean (counters exact, no asymmetry) and the call happened whole or
// not at all.
func TestCrashAtEachStep(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.OpenOwn(t, tables.Namespace, "prov")
			if err := tables.Migrate(t.Context(), st); err != nil {
				t.Fatal(err)
			}
			reached := map[string]bool{}
			for _, c := range crashCases() {
				t.Run(c.name, func(t *testing.T) {
					for _, s := range runCrash(t, st, c) {
						reached[s] = true
					}
				})
			}
			for _, s := range provision.Steps {
				if !reached[s] {
					t.Errorf("no call reached the step %s", s)
				}
			}
		})
	}
}

// runCrash kills c's call at each step it reaches and returns the steps.
func runCrash(t *testing.T, st hbase.Store, c crashCase) []string {
	rec := &killer{}
	state := c.setup(t, open(t, st, 0, nil), "rec")
	if err := c.do(t.Context(), open(t, st, time.Hour, rec.hook), state); err != nil {
		t.Fatalf("unkilled call: %v", err)
	}
	c.verify(t, open(t, st, 0, nil), state)
	if len(rec.seen) < 3 {
		t.Fatalf("steps %v", rec.seen)
	}
	t.Logf("steps: %s", strings.Join(rec.seen, " "))
	for i, step := range rec.seen {
		state := c.setup(t, open(t, st, 0, nil), "k"+itoa(i))
		k := &killer{kill: step}
		if err := c.do(t.Context(), open(t, st, time.Hour, k.hook), state); !errors.Is(err, errKilled) {
			t.Logf("%s: the call did not reach the step this time (%v)", step, err)
		}
		after := open(t, st, 0, nil)
		repairFsck(t, after)
		c.verify(t, after, state)
		if t.Failed() {
			t.Fatalf("after a kill at %s", step)
		}
	}
	return rec.seen
}

func itoa(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

type userState struct {
	uid              weibo.UserID
	name, next       string
	ext, nextExt     string
	role, department string
}

func crashCases() []crashCase {
	return []crashCase{{
		name: "create",
		setup: func(t *testing.T, d *domain.Domain, tag string) any {
			return &userState{name: "crash." + tag + "@corp.example", ext: "ext-" + tag}
		},
		do: func(ctx context.Context, d *domain.Domain, s any) error {
			st := s.(*userState)
			_, err := d.Provision.CreateUser(ctx, okta, provision.UserInput{UserName: st.name, ExternalID: st.ext, Password: "correct horse", Active: true})
			return err
		},
		verify: func(t *testing.T, d *domain.Domain, s any) {
			ctx := t.Context()
			st := s.(*userState)
			u := must(d.Provision.UserByName(ctx, st.name))
			if u == nil {
				if got := must(d.Provision.UsersByExternalID(ctx, st.ext)); len(got) != 0 {
					t.Errorf("no user, but its externalId finds %+v", got)
				}
				return
			}
			if got := must(d.Provision.UsersByExternalID(ctx, st.ext)); len(got) != 1 || got[0].ID != u.ID {
				t.Errorf("user %d, externalId finds %+v", u.ID, got)
			}
			if !slices.ContainsFunc(must(d.Provision.ListUsers(ctx, u.ID-1, 1)), func(l *provision.User) bool { return l.ID == u.ID }) {
				t.Errorf("user %d not listed", u.ID)
			}
			for _, name := range []string{st.name, u.Username} {
				if _, err := d.Accounts.Login(ctx, name, "correct horse"); err != nil {
					t.Errorf("login %s: %v", name, err)
				}
			}
		},
	}, {
		name: "replace",
		setup: func(t *testing.T, d *domain.Domain, tag string) any {
			st := &userState{name: "before." + tag + "@corp.example", next: "after." + tag + "@corp.example", ext: "ext1-" + tag, nextExt: "ext2-" + tag}
			st.uid = must(d.Provision.CreateUser(t.Context(), okta, provision.UserInput{UserName: st.name, ExternalID: st.ext, Active: true})).ID
			return st
		},
		do: func(ctx context.Context, d *domain.Domain, s any) error {
			st := s.(*userState)
			_, err := d.Provision.ReplaceUser(ctx, okta, st.uid, provision.UserInput{UserName: st.next, ExternalID: st.nextExt, Active: false}, nil)
			return err
		},
		verify: func(t *testing.T, d *domain.Domain, s any) {
			ctx := t.Context()
			st := s.(*userState)
			u := must(d.Provision.GetUser(ctx, st.uid))
			now, was, ext, old := st.name, st.next, st.ext, st.nextExt
			if u.UserName == st.next {
				now, was, ext, old = st.next, st.name, st.nextExt, st.ext
			}
			if got := must(d.Provision.UserByName(ctx, now)); got == nil || got.ID != st.uid {
				t.Errorf("%s finds %+v", now, got)
			}
			if got := must(d.Provision.UserByName(ctx, was)); got != nil {
				t.Errorf("%s still finds %+v", was, got)
			}
			if got := must(d.Provision.UsersByExternalID(ctx, ext)); len(got) != 1 {
				t.Errorf("%s finds %+v", ext, got)
			}
			if got := must(d.Provision.UsersByExternalID(ctx, old)); len(got) != 0 {
				t.Errorf("%s still finds %+v", old, got)
			}
		},
	}, {
		name: "close",
		setup: func(t *testing.T, d *domain.Domain, tag string) any {
			ctx := t.Context()
			st := &userState{name: "closing." + tag + "@corp.example", ext: "ext-" + tag}
			st.uid = must(d.Provision.CreateUser(ctx, okta, provision.UserInput{UserName: st.name, ExternalID: st.ext, Password: "correct horse", Active: true})).ID
			st.role = must(d.Provision.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "r-" + tag, Members: []weibo.UserID{st.uid}})).ID
			st.department = must(d.Provision.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "d-" + tag, Members: []weibo.UserID{st.uid}})).ID
			return st
		},
		do: func(ctx context.Context, d *domain.Domain, s any) error {
			return d.Provision.DeleteUser(ctx, okta, s.(*userState).uid, nil)
		},
		verify: func(t *testing.T, d *domain.Domain, s any) {
			ctx := t.Context()
			st := s.(*userState)
			_, err := d.Provision.GetUser(ctx, st.uid)
			if err == nil {
				return // not closed: nothing else changed
			}
			if code(err) != weibo.CodeNotFound {
				t.Fatal(err)
			}
			for _, id := range []string{st.role, st.department} {
				if g := must(d.Provision.GetGroup(ctx, id, true)); len(g.Members) != 0 {
					t.Errorf("closed user still in %s", id)
				}
			}
			if _, err := d.Accounts.Login(ctx, st.name, "correct horse"); code(err) != weibo.CodeAccountSuspended {
				t.Errorf("closed user's login: %v", err)
			}
			if got := must(d.Provision.ListUsers(ctx, st.uid-1, 1)); len(got) > 0 && got[0].ID == st.uid {
				t.Errorf("closed user listed")
			}
		},
	}, {
		name: "create group",
		setup: func(t *testing.T, d *domain.Domain, tag string) any {
			return []any{newUsers(t, d, "grp"+tag+".", 2), "cg-" + tag}
		},
		do: func(ctx context.Context, d *domain.Domain, s any) error {
			v := s.([]any)
			us := v[0].([]weibo.UserID)
			_, err := d.Provision.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: v[1].(string), ExternalID: v[1].(string), Priority: 3, Members: us})
			return err
		},
		verify: func(t *testing.T, d *domain.Domain, s any) {
			for _, g := range must(d.Provision.GroupsByExternalID(t.Context(), s.([]any)[1].(string))) {
				g = must(d.Provision.GetGroup(t.Context(), g.ID, true))
				if g.Version != 1 || g.Priority != 3 || counts(t, d, g) != int64(len(g.Members)) {
					t.Errorf("a group found by its externalId is not whole: %+v", g)
				}
			}
		},
	}, {
		name: "patch group",
		setup: func(t *testing.T, d *domain.Domain, tag string) any {
			ctx := t.Context()
			us := newUsers(t, d, "patch"+tag+".", 3)
			role := must(d.Provision.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "pr-" + tag, ExternalID: "pr-" + tag, Members: us[:2]}))
			dept := must(d.Provision.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "pd-" + tag, Members: us[:1]}))
			return []any{us, role.ID, dept.ID}
		},
		do: func(ctx context.Context, d *domain.Domain, s any) error {
			v := s.([]any)
			us := v[0].([]weibo.UserID)
			if _, err := d.Provision.PatchGroup(ctx, okta, v[1].(string), provision.GroupChange{Priority: new(7), ExternalID: new("pr2"),
				Add: us[2:], Remove: us[:1]}, nil); err != nil {
				return err
			}
			_, err := d.Provision.PatchGroup(ctx, okta, v[2].(string), provision.GroupChange{Add: us[1:], Remove: us[:1]}, nil)
			return err
		},
		verify: func(t *testing.T, d *domain.Domain, s any) {
			for _, id := range s.([]any)[1:] {
				g := must(d.Provision.GetGroup(t.Context(), id.(string), true))
				if n := counts(t, d, g); n != int64(len(g.Members)) {
					t.Errorf("%s: %d members, counter %d", id, len(g.Members), n)
				}
			}
		},
	}}
}
