package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/media"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/tables"
)

// env is a domain over a store of the test's own with the media module
// wired as domain.New would wire it.
type env struct {
	st     hbase.StoreAdmin
	d      *domain.Domain
	m      *media.Service
	clk    *domaintest.Clock
	faults *domaintest.Faults
}

func newEnv(t *testing.T, b testenv.Backend) *env {
	t.Helper()
	return newEnvOn(t, domaintest.OwnStore(t, b))
}

// newEnvOn is newEnv over st, migrated already.
func newEnvOn(t *testing.T, st hbase.StoreAdmin) *env {
	t.Helper()
	clk, faults := &domaintest.Clock{}, domaintest.NewFaults()
	d := domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(2*time.Second), domain.WithStepHook(faults.Hook))
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &env{st: st, d: d, m: d.Media, clk: clk, faults: faults}
}

// picture is a processed upload built by hand: its three variants' bytes
// derived from seed (LARGE above the MOB threshold).
func picture(seed byte) *process.Result {
	img := func(v process.Variant, n int) process.Image {
		b := bytes.Repeat([]byte{seed, byte(len(v))}, n/2)
		return process.Image{Variant: v, MIME: "image/jpeg", Width: n % 2000, Height: 100, Data: b}
	}
	return &process.Result{Format: "jpeg", Blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
		Images: []process.Image{img(process.Thumb, 4000), img(process.Middle, 40000), img(process.Large, 150000)}}
}

func wantCode(t *testing.T, err error, code, field string) {
	t.Helper()
	var we *weibo.Error
	if !errors.As(err, &we) || we.Code != code || (field != "" && we.Field != field) {
		t.Fatalf("error %v, want %s on %q", err, code, field)
	}
}

// blobRows counts the blob rows holding data and the reference rows.
func blobRows(t *testing.T, st hbase.Store) (data, refs int) {
	t.Helper()
	rows, err := hbase.ScanAll(t.Context(), st, &hbase.Scan{Table: tables.Media, Prefix: tables.BlobRowsPrefix})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		_, ref, _, _, _ := tables.DecodeBlobKey(r.Row)
		switch {
		case ref:
			refs++
		case r.Value(tables.FamMediaData, tables.ColBlobData) != nil:
			data++
		}
	}
	return data, refs
}

// fsckIssues runs fsck over the social area, repairing when asked.
func fsckIssues(t *testing.T, d *domain.Domain, repair bool) []fsck.Issue {
	t.Helper()
	rep, err := fsck.Run(t.Context(), d, fsck.Options{Areas: fsck.AreaSocial, Repair: repair})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Issues
}

func TestUploadGetVariant(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			other := domaintest.MustUser(t, e.d, domaintest.Uniq("o"))
			pic := picture(1)
			alt := "a cat"
			m, err := e.m.Upload(ctx, u.ID, pic, &alt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.m.Get(ctx, []weibo.MediaID{m.ID, m.ID + 1})
			if err != nil || got[0] == nil || got[1] != nil {
				t.Fatalf("Get = %v, %v", got, err)
			}
			g := got[0]
			if g.Owner != u.ID || g.Alt == nil || *g.Alt != alt || g.Blurhash != pic.Blurhash || g.Post != nil || len(g.Variants) != 3 {
				t.Errorf("Get = %+v", g)
			}
			for _, img := range pic.Images {
				v := g.Variants[img.Variant]
				if v.Hash != sha256.Sum256(img.Data) || v.Bytes != int64(len(img.Data)) || v.MIME != img.MIME || v.Width != img.Width {
					t.Errorf("variant %s: %+v", img.Variant, v)
				}
				bl, err := e.m.Variant(ctx, m.ID, img.Variant)
				if err != nil || !bytes.Equal(bl.Data, img.Data) || bl.MIME != "image/jpeg" || bl.Hash != v.Hash {
					t.Fatalf("Variant %s: %v", img.Variant, err)
				}
			}
			_, err = e.m.Variant(ctx, m.ID+1, process.Thumb)
			wantCode(t, err, weibo.CodeNotFound, "")

			_, err = e.m.UpdateAlt(ctx, other.ID, m.ID, nil)
			wantCode(t, err, weibo.CodeForbidden, "")
			long := string(bytes.Repeat([]byte("字"), media.MaxAltLength+1))
			_, err = e.m.UpdateAlt(ctx, u.ID, m.ID, &long)
			wantCode(t, err, weibo.CodeBadUserInput, "alt")
			alt2 := "two cats"
			if up, err := e.m.UpdateAlt(ctx, u.ID, m.ID, &alt2); err != nil || *up.Alt != alt2 {
				t.Fatalf("UpdateAlt = %v, %v", up, err)
			}
			if got, _ := e.m.Get(ctx, []weibo.MediaID{m.ID}); got[0].Alt == nil || *got[0].Alt != alt2 {
				t.Errorf("alt after UpdateAlt: %v", got[0].Alt)
			}
			if _, err := e.m.UpdateAlt(ctx, u.ID, m.ID, nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := e.m.Get(ctx, []weibo.MediaID{m.ID}); got[0].Alt != nil {
				t.Errorf("alt removed: %q", *got[0].Alt)
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}

// TestDedup: identical uploads store each variant's bytes once, with one
// reference per upload.
func TestDedup(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			for range 3 {
				if _, err := e.m.Upload(ctx, u.ID, picture(2), nil); err != nil {
					t.Fatal(err)
				}
			}
			if data, refs := blobRows(t, e.st); data != 3 || refs != 9 {
				t.Errorf("%d blobs with data, %d references; want 3, 9", data, refs)
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}

func TestAttachRules(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			other := domaintest.MustUser(t, e.d, domaintest.Uniq("o"))
			var mine []weibo.MediaID
			for i := range 10 {
				m, err := e.m.Upload(ctx, u.ID, picture(byte(10+i)), nil)
				if err != nil {
					t.Fatal(err)
				}
				mine = append(mine, m.ID)
			}
			theirs, err := e.m.Upload(ctx, other.ID, picture(3), nil)
			if err != nil {
				t.Fatal(err)
			}
			for name, ids := range map[string][]weibo.MediaID{
				"another's": {mine[0], theirs.ID},
				"ten":       mine,
				"twice":     {mine[0], mine[0]},
				"unknown":   {mine[0] + 1},
			} {
				_, err := e.d.Feed.Publish(ctx, u.ID, "", ids...)
				if err == nil {
					t.Fatalf("%s: published", name)
				}
				wantCode(t, err, weibo.CodeBadUserInput, "mediaIds")
			}
			p, err := e.d.Feed.Publish(ctx, u.ID, "", mine[:9]...)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Media) != 9 || p.Media[8] != mine[8] {
				t.Errorf("post media %v", p.Media)
			}
			ps, err := e.d.Feed.GetPosts(ctx, []weibo.PostID{p.ID})
			if err != nil || ps[0] == nil || len(ps[0].Media) != 9 || ps[0].Media[0] != mine[0] || ps[0].Content != "" {
				t.Fatalf("GetPosts = %+v, %v", ps[0], err)
			}
			// A post of pictures only is a post to every module.
			if _, err := e.d.Comments.AddComment(ctx, other.ID, p.ID, "nice", nil); err != nil {
				t.Errorf("comment on a post of pictures only: %v", err)
			}
			if _, err := e.d.Likes.Like(ctx, other.ID, p.ID); err != nil {
				t.Errorf("like of a post of pictures only: %v", err)
			}
			_, err = e.d.Feed.Publish(ctx, u.ID, "again", mine[:1]...)
			wantCode(t, err, weibo.CodeBadUserInput, "mediaIds")
			_, err = e.m.UpdateAlt(ctx, u.ID, mine[0], nil)
			wantCode(t, err, weibo.CodeBadUserInput, "id")
			got, _ := e.m.Get(ctx, mine[:1])
			if got[0].Post == nil || *got[0].Post != p.ID {
				t.Errorf("attached media's post: %v", got[0].Post)
			}
			if _, err := e.d.Feed.Publish(ctx, u.ID, "with text", mine[9:]...); err != nil {
				t.Fatal(err)
			}
			domaintest.WaitQuiet(t, e.d, time.Minute)
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
			if n := domaintest.Leftovers(t, e.st); n != 0 {
				t.Errorf("%d markers left", n)
			}
		})
	}
}

// TestDeleteReleases: deleting a post removes the bytes nothing else
// references and keeps those another post's picture shares.
func TestDeleteReleases(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			m1, err := e.m.Upload(ctx, u.ID, picture(4), nil)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := e.m.Upload(ctx, u.ID, picture(4), nil)
			if err != nil {
				t.Fatal(err)
			}
			p1, err := e.d.Feed.Publish(ctx, u.ID, "one", m1.ID)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := e.d.Feed.Publish(ctx, u.ID, "two", m2.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.d.Feed.DeletePost(ctx, p1.ID); err != nil {
				t.Fatal(err)
			}
			_, err = e.m.Variant(ctx, m1.ID, process.Large)
			wantCode(t, err, weibo.CodeNotFound, "")
			if bl, err := e.m.Variant(ctx, m2.ID, process.Large); err != nil || len(bl.Data) != 150000 {
				t.Fatalf("the shared bytes after one delete: %v", err)
			}
			if data, refs := blobRows(t, e.st); data != 3 || refs != 3 {
				t.Errorf("after one delete: %d blobs, %d references; want 3, 3", data, refs)
			}
			if _, err := e.d.Feed.DeletePost(ctx, p2.ID); err != nil {
				t.Fatal(err)
			}
			if data, refs := blobRows(t, e.st); data != 0 || refs != 0 {
				t.Errorf("after both deletes: %d blobs, %d references; want none", data, refs)
			}
			domaintest.WaitQuiet(t, e.d, time.Minute)
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}

// TestUnattachedExpires: an upload never attached is gone to every read
// once its 24 hours have passed (the family's TTL, by the store's own
// clock), cannot be attached, and the repairer's sweep releases its
// bytes.
func TestUnattachedExpires(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			kept, err := e.m.Upload(ctx, u.ID, picture(5), nil)
			if err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(-(tables.MediaUploadTTL + time.Minute)) // uploaded a day and a minute ago
			old, err := e.m.Upload(ctx, u.ID, picture(6), nil)
			if err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(tables.MediaUploadTTL + time.Minute)
			if got, err := e.m.Get(ctx, []weibo.MediaID{old.ID, kept.ID}); err != nil || got[0] != nil || got[1] == nil {
				t.Fatalf("Get after a day = %v, %v; want the old upload gone", got, err)
			}
			_, err = e.m.Variant(ctx, old.ID, process.Thumb)
			wantCode(t, err, weibo.CodeNotFound, "")
			_, err = e.d.Feed.Publish(ctx, u.ID, "late", old.ID)
			wantCode(t, err, weibo.CodeBadUserInput, "mediaIds")
			if data, _ := blobRows(t, e.st); data != 6 {
				t.Fatalf("%d blobs before the sweep, want 6", data)
			}
			e.clk.Advance(5 * time.Second) // past the repair grace
			if _, err := e.d.Writes.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if data, refs := blobRows(t, e.st); data != 3 || refs != 3 {
				t.Errorf("after the sweep: %d blobs, %d references; want the kept upload's 3, 3", data, refs)
			}
			if _, err := e.m.Variant(ctx, kept.ID, process.Thumb); err != nil {
				t.Errorf("the kept upload: %v", err)
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}

// TestUploadCrashes kills an upload at every step it reaches (each
// reference's steps, after its expiry row, after its media row): the
// repairer's passes a day later leave no bytes, no reference and no
// marker, and fsck is clean; an upload killed after its media row is an
// upload like any other until then.
func TestUploadCrashes(t *testing.T) {
	ref := counted.StepsOf(media.RelationRef)
	steps := []string{media.StepUploadExpiry, ref.Marked, ref.Sequenced, ref.Decided, ref.Counted, ref.Settled, media.StepUploadStored}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			for i, step := range steps {
				e.faults.Arm(step)
				if _, err := e.m.Upload(ctx, u.ID, picture(byte(20+i)), nil); !errors.Is(err, domaintest.ErrInjected) {
					t.Fatalf("upload killed at %s: %v", step, err)
				}
			}
			if data, _ := blobRows(t, e.st); data == 0 {
				t.Fatal("the killed uploads left no bytes to release")
			}
			e.clk.Advance(tables.MediaUploadTTL + time.Minute)
			for range 2 {
				if _, err := e.d.Writes.Repair(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if data, refs := blobRows(t, e.st); data != 0 || refs != 0 {
				t.Errorf("a day after the killed uploads: %d blobs, %d references; want none", data, refs)
			}
			if n := domaintest.Leftovers(t, e.st); n != 0 {
				t.Errorf("%d markers left", n)
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}
