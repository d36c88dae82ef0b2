package media_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/media"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/tables"
)

// handle is one process of the conformance suite: the domain with the
// media module wired.
type handle struct {
	d      *domain.Domain
	m      *media.Service
	killed *atomic.Pointer[error] // its kill, with the suite's step hook
}

// TestRefConformance runs the conformance suite of counted relations
// (countedtest) over a blob reference, on both backends: a report's hold
// of a picture (the reference added) and its release (dropped) are killed
// at every step of the mediaref relation and outlive their budget; after
// the restart's repair the blob's refCount equals its recount, the
// reference is as the call decided, no marker is left and fsck (the media
// check with the others) finds nothing.
func TestRefConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := refModule()
			m.Setup = refPair
			countedtest.Run(t, st, m)
		})
	}
}

// refModule is the module of the mediaref relation over handles, run as
// domaintest.DomainModule runs the domain's: a handle killed once stays
// dead (every step it reaches afterwards fails), and a call that succeeds
// reaches domaintest.StepAcknowledged, then has its handle's background
// work (fan-out, retraction) run to its end.
func refModule() countedtest.Module[*handle] {
	return countedtest.Module[*handle]{
		Marker: tables.PendingMediaRef,
		Open: func(st hbase.Store, cfg countedtest.Config) *handle {
			h := &handle{}
			if hook := cfg.Hook; hook != nil {
				h.killed = new(atomic.Pointer[error])
				cfg.Hook = func(ctx context.Context, step string) error {
					if kill := h.killed.Load(); kill != nil {
						return *kill
					}
					err := hook(ctx, step)
					if err != nil {
						h.killed.CompareAndSwap(nil, &err)
					}
					return err
				}
			}
			h.d = domaintest.ConformanceDomain(st, cfg)
			h.m = h.d.Media
			return h
		},
		Protocol: func(h *handle) *counted.Protocol { return h.d.Writes },
		Quiesce:  quiesce,
		Fsck: func(ctx context.Context, h *handle) ([]string, error) {
			rep, err := fsck.Run(ctx, h.d, fsck.Options{RepairGrace: countedtest.Grace})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, i := range rep.Issues {
				out = append(out, fmt.Sprintf("%s: %s", i.Kind, i.Detail))
			}
			return out, nil
		},
	}
}

// quiesce runs h's background work to its end and stops it.
func quiesce(ctx context.Context, h *handle) error {
	if err := h.d.Start(ctx); err != nil {
		return err
	}
	if err := h.d.FlushFanout(ctx); err != nil {
		return err
	}
	return h.d.Close(ctx)
}

// finish ends a call of the suite made on h with err: a success reaches
// domaintest.StepAcknowledged, then h's background work runs to its end
// (a kill there is the call's).
func finish(ctx context.Context, h *handle, err error) error {
	if err != nil || h.killed == nil {
		return err
	}
	if err := h.d.Writes.Step(ctx, domaintest.StepAcknowledged); err != nil {
		return err
	}
	err = quiesce(ctx, h)
	if kill := h.killed.Load(); kill != nil {
		return errors.Join(*kill, h.d.Close(ctx))
	}
	return err
}

// refPair is the reference of an open report (its module not holding
// pictures by itself: no SetMedia) to the blob of a fresh one-variant
// picture of the reported post.
func refPair(t *testing.T, h *handle) *countedtest.Pair[*handle] {
	ctx := t.Context()
	u := domaintest.MustUser(t, h.d, domaintest.Uniq("u"))
	seed := weibo.UserID(u.ID)
	pic := &process.Result{Blurhash: "x", Images: []process.Image{{Variant: process.Large, MIME: "image/png", Width: 1, Height: 1,
		Data: []byte(fmt.Sprintf("picture of %d", seed))}}}
	m, err := h.m.Upload(ctx, u.ID, pic, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := m.Variants[process.Large].Hash
	post, err := h.d.Feed.Publish(ctx, u.ID, "", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	reporter := domaintest.MustUser(t, h.d, domaintest.Uniq("r"))
	rep, err := h.d.Reports.Create(ctx, reporter.ID, report.Input{Target: u.ID, Posts: []weibo.PostID{post.ID}, Category: report.CategorySpam})
	if err != nil {
		t.Fatal(err)
	}
	rid := rep.ID
	// The open report holds the picture from its creation: released, the
	// pair starts from no reference and Do takes it again.
	if err := h.m.Release(ctx, rid); err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*handle]{
		Owner: uint64(rid), Other: uint64(tables.HolderReport), Extra: hash[:],
		Do: func(ctx context.Context, h *handle) error {
			return finish(ctx, h, h.m.Hold(ctx, rid, []weibo.MediaID{m.ID}))
		},
		Undo: func(ctx context.Context, h *handle) error { return finish(ctx, h, h.m.Release(ctx, rid)) },
		Present: func(ctx context.Context, h *handle) (bool, error) {
			r, err := h.d.Store().Get(ctx, &hbase.Get{Table: tables.Media, Row: tables.MediaRefKey(hash, tables.HolderReport, uint64(rid))})
			return r.Exists(), err
		},
	}
}

// TestAttachConformance runs the suite over the attach of a post's
// picture: a publish with media is killed at every step of its attach
// (marked, sequenced, attached, settled) and after its content row; the
// post's delete after its content row's delete and in the release; each
// restarted and repaired: the media is attached exactly when the post is
// stored, released (its bytes gone with it) otherwise, no marker left,
// fsck clean.
func TestAttachConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := refModule()
			m.Marker = tables.PendingMediaAttach
			m.MarkerKinds = []tables.PendingKind{tables.PendingPostDelete, tables.PendingMediaRef}
			m.MarkerTables = []string{tables.Outbox}
			m.Decided, m.UndoDecided = feed.StepPublishContent, feed.StepDeleteContent
			s := counted.StepsOf(media.RelationAttach)
			m.Steps = []string{s.Marked, s.Sequenced, media.StepAttached, s.Settled, feed.StepPublishContent,
				feed.StepDeleteContent, media.StepReleased}
			m.Setup = attachPair
			countedtest.Run(t, st, m)
		})
	}
}

// attachPair is the publish of a post of one fresh upload, and its
// delete.
func attachPair(t *testing.T, h *handle) *countedtest.Pair[*handle] {
	ctx := t.Context()
	u := domaintest.MustUser(t, h.d, domaintest.Uniq("u"))
	m, err := h.m.Upload(ctx, u.ID, picture(byte(u.ID)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var post weibo.PostID
	return &countedtest.Pair[*handle]{
		Owner: uint64(u.ID),
		Do: func(ctx context.Context, h *handle) error {
			p, err := h.d.Feed.Publish(ctx, u.ID, "", m.ID)
			if err == nil {
				post = p.ID
			}
			return finish(ctx, h, err)
		},
		Undo: func(ctx context.Context, h *handle) error {
			_, err := h.d.Feed.DeletePost(ctx, post)
			return finish(ctx, h, err)
		},
		Present: func(ctx context.Context, h *handle) (bool, error) {
			ms, err := h.m.Get(ctx, []weibo.MediaID{m.ID})
			if err != nil || ms[0] == nil || ms[0].Post == nil {
				return false, err
			}
			ps, err := h.d.Feed.GetPosts(ctx, []weibo.PostID{*ms[0].Post})
			return err == nil && ps[0] != nil, err
		},
	}
}
