package domain_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/org"
)

// TestCrashPoints kills every counted write at every step between two of
// its writes (the WithPairWriteHook steps), and a fan-out after its inbox
// writes, and also makes writes outlive their budget (the clock jumps
// past half the repair grace in the middle of the write). A restarted
// service on the same store, its clock moved past the repair grace, must
// then repair everything by itself — Start's outbox sweep and repair pass
// — after which every acknowledged write is present and checkWorld holds
// for the write's users (fsck over the whole store included).
func TestCrashPoints(t *testing.T) {
	const grace = 10 * time.Second
	type scenario struct {
		op    string // follow, unfollow, assign, revoke, publish
		step  string // where it is killed ("" with slow: where the clock jumps)
		slow  bool   // outlives its budget instead of dying
		fails bool   // the call returns the crash (else it succeeds)
	}
	var scenarios []scenario
	relationSteps := []string{follow.StepMarked, follow.StepSequenced, follow.StepDecided,
		follow.StepCounted, follow.StepFans, follow.StepInbox}
	for _, op := range []string{"follow", "unfollow"} {
		for _, st := range relationSteps {
			scenarios = append(scenarios, scenario{op: op, step: st, fails: true})
		}
		scenarios = append(scenarios, scenario{op: op, step: follow.StepSequenced, slow: true})
	}
	scenarios = append(scenarios,
		scenario{op: "assign", step: org.StepRoleMarked, fails: true},
		scenario{op: "assign", step: org.StepRoleSequenced, fails: true},
		scenario{op: "assign", step: org.StepRoleAssign, fails: true},
		scenario{op: "assign", step: org.StepRoleCounted, fails: true},
		scenario{op: "assign", step: org.StepRoleSequenced, slow: true},
		scenario{op: "revoke", step: org.StepRoleMarked, fails: true},
		scenario{op: "revoke", step: org.StepRoleSequenced, fails: true},
		scenario{op: "revoke", step: org.StepRoleCounted, fails: true},
		scenario{op: "revoke", step: org.StepRoleRevoke, fails: true},
		scenario{op: "revoke", step: org.StepRoleSequenced, slow: true},
		scenario{op: "publish", step: feed.StepPublishOutbox, fails: true},
		scenario{op: "publish", step: feed.StepPublishSequenced, fails: true},
		scenario{op: "publish", step: feed.StepPublishContent, fails: true},
		scenario{op: "publish", step: feed.StepPublishCounted, fails: true},
		scenario{op: "publish", step: ""},                 // acknowledged, killed before its fan-out ran
		scenario{op: "publish", step: fanout.StepWritten}, // killed in the middle of its fan-out
		scenario{op: "publish", step: feed.StepPublishSequenced, slow: true},
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			clk := &domaintest.Clock{}
			for _, sc := range scenarios {
				name := sc.op + "@" + sc.step
				if sc.slow {
					name = sc.op + "-slow"
				}
				t.Run(name, func(t *testing.T) {
					setup := domaintest.Quiet(st, clk.Option())
					a, bu, fan := mustUser(t, setup, uniq("a")), mustUser(t, setup, uniq("b")), mustUser(t, setup, uniq("fan"))
					w := &world{users: []*weibo.User{a, bu, fan}, posts: map[weibo.UserID][]weibo.PostID{}}
					role, err := setup.Org.Roles.Create(ctx, uniq("r"))
					if err != nil {
						t.Fatal(err)
					}
					w.roles = []*org.Role{role}
					for i := range 3 {
						p, err := setup.Feed.Publish(ctx, bu.ID, fmt.Sprintf("before %d", i))
						if err != nil {
							t.Fatal(err)
						}
						w.addPost(p)
					}
					if _, err := setup.Follows.Follow(ctx, fan.ID, bu.ID); err != nil {
						t.Fatal(err)
					}
					switch sc.op {
					case "unfollow":
						if _, err := setup.Follows.Follow(ctx, a.ID, bu.ID); err != nil {
							t.Fatal(err)
						}
					case "revoke":
						if _, err := setup.Org.Roles.Assign(ctx, a.ID, role.ID, 5); err != nil {
							t.Fatal(err)
						}
					}
					if err := setup.Start(ctx); err != nil { // the setup's fan-outs
						t.Fatal(err)
					}
					if err := setup.Close(ctx); err != nil {
						t.Fatal(err)
					}

					// The write that dies (or outlives its budget).
					hook, hit := domaintest.CrashAt(sc.step)
					if sc.step == "" {
						hit = func() bool { return true }
					}
					if sc.slow {
						hook = func(_ context.Context, s string) error {
							if s == sc.step {
								clk.Advance(grace/2 + time.Second)
							}
							return nil
						}
						hit = func() bool { return true }
					}
					crashed := domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(grace), domain.WithFanoutLease(grace/2), domain.WithStepHook(hook))
					if sc.step == fanout.StepWritten {
						if err := crashed.Start(ctx); err != nil { // its workers run the fan-out, which dies
							t.Fatal(err)
						}
					}
					switch sc.op {
					case "follow":
						_, err = crashed.Follows.Follow(ctx, a.ID, bu.ID)
					case "unfollow":
						_, err = crashed.Follows.Unfollow(ctx, a.ID, bu.ID)
					case "assign":
						_, err = crashed.Org.Roles.Assign(ctx, a.ID, role.ID, 9)
					case "revoke":
						_, err = crashed.Org.Roles.Revoke(ctx, a.ID, role.ID)
					case "publish":
						var p *feed.Post
						if p, err = crashed.Feed.Publish(ctx, bu.ID, "the last words"); err == nil {
							w.addPost(p) // acknowledged
						}
					}
					if sc.fails != errors.Is(err, domaintest.ErrCrash) || (!sc.fails && err != nil) {
						t.Fatalf("the call returned %v", err)
					}
					if sc.step == fanout.StepWritten {
						_ = crashed.FlushFanout(ctx)
						_ = crashed.Close(ctx)
					}
					if !hit() {
						t.Fatalf("step %s never reached", sc.step)
					}

					// The restart, once the grace has passed.
					clk.Advance(grace + time.Second)
					restarted := domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(grace), domain.WithFanoutLease(grace/2))
					for round := 0; ; round++ {
						if err := restarted.Start(ctx); err != nil {
							t.Fatal(err)
						}
						if err := restarted.FlushFanout(ctx); err != nil {
							t.Fatal(err)
						}
						if _, err := restarted.Writes.Repair(ctx); err != nil {
							t.Fatal(err)
						}
						if left := domaintest.Leftovers(t, st); left == 0 {
							break
						} else if round == 3 {
							t.Fatalf("%d pending or outbox rows left after %d restarts", left, round+1)
						}
						if err := restarted.Close(ctx); err != nil {
							t.Fatal(err)
						}
						restarted = domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(grace), domain.WithFanoutLease(grace/2))
					}
					_ = restarted.Close(ctx)
					checkWorld(t, restarted, w, grace, false)
				})
			}
		})
	}
}
