package media_test

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/media"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestMediaChecks damages weibo:media one kind at a time and runs fsck:
// each damage is reported, repaired where the bytes allow, and fsck is
// clean afterwards.
func TestMediaChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			m, err := e.m.Upload(ctx, u.ID, picture(7), nil)
			if err != nil {
				t.Fatal(err)
			}
			gone, err := e.m.Upload(ctx, u.ID, picture(8), nil)
			if err != nil {
				t.Fatal(err)
			}
			thumb := m.Variants[process.Thumb].Hash
			orphan := sha256.Sum256([]byte("orphan"))
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			// A reference lost, a blob nothing references, a counter off,
			// a media row lost under its references.
			must(e.st.Delete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaRefKey(thumb, tables.HolderMedia, uint64(m.ID))}))
			must(e.st.Put(ctx, &hbase.Put{Table: tables.Media, Row: tables.BlobKey(orphan), Values: hbase.Values{
				tables.FamMediaData: {tables.ColBlobData: []byte("x"), tables.ColBlobMIME: []byte("image/png")}}}))
			must(e.st.Put(ctx, &hbase.Put{Table: tables.Media, Row: tables.BlobKey(m.Variants[process.Large].Hash), Values: hbase.Values{
				tables.FamCount: {tables.ColBlobRefCount: tables.U64(7)}}}))
			must(e.st.Delete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaKey(gone.ID)}))
			must(e.st.Delete(ctx, &hbase.Delete{Table: tables.Media,
				Row: tables.MediaExpiryKey(gone.CreatedAt.UnixMilli()+tables.MediaUploadTTL.Milliseconds(), gone.ID)}))
			// A report that does not exist holding the picture.
			must(e.m.Hold(ctx, weibo.ReportID(12345), []weibo.MediaID{m.ID}))
			e.clk.Advance(time.Minute)

			found := map[string]int{}
			for _, i := range fsckIssues(t, e.d, true) {
				found[i.Kind]++
			}
			want := map[string]int{
				media.IssueRefMissing: 1,
				// The orphan (the thumb, its media's reference lost, is
				// still the report's).
				media.IssueBlobOrphan:  1,
				media.IssueRefDangling: 3,
				// The thumb's counter (one reference lost), the large
				// one's (set to 7) and the gone upload's three.
				media.IssueRefCount:   2,
				media.IssueReportHeld: 1,
			}
			for k, n := range want {
				if found[k] != n {
					t.Errorf("fsck found %d %s, want %d (all: %v)", found[k], k, n, found)
				}
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck after the repair: %+v", is)
			}
			if bl, err := e.m.Variant(ctx, m.ID, process.Thumb); err != nil || bl.Hash != thumb {
				t.Errorf("the repaired media's thumb: %v", err)
			}
			if data, refs := blobRows(t, e.st); data != 3 || refs != 3 {
				t.Errorf("after the repair: %d blobs, %d references; want 3, 3", data, refs)
			}
		})
	}
}

// TestSharedPictureStorm publishes and deletes, concurrently, posts whose
// pictures are all the same bytes (each post its own uploads): at the
// end no bytes are left, no reference, no marker, and fsck is clean.
func TestSharedPictureStorm(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnvOn(t, domaintest.Jittery{StoreAdmin: domaintest.OwnStore(t, b)}), t.Context()
			const writers, rounds = 8, 6
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						var ids []weibo.MediaID
						for range 1 + (w+r)%3 {
							m, err := e.m.Upload(ctx, u.ID, picture(9), nil)
							if err != nil {
								errs <- err
								return
							}
							ids = append(ids, m.ID)
						}
						p, err := e.d.Feed.Publish(ctx, u.ID, "", ids...)
						if err != nil {
							errs <- err
							return
						}
						if _, err := e.d.Feed.DeletePost(ctx, p.ID); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			domaintest.WaitQuiet(t, e.d, time.Minute)
			if data, refs := blobRows(t, e.st); data != 0 || refs != 0 {
				t.Errorf("after the storm: %d blobs with data, %d references; want none", data, refs)
			}
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}

// TestAttachRace: publishes racing to attach the same pictures: exactly
// one is stored, every other is refused with BAD_USER_INPUT (mediaIds),
// and nothing is left half-attached.
func TestAttachRace(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnvOn(t, domaintest.Jittery{StoreAdmin: domaintest.OwnStore(t, b)}), t.Context()
			u := domaintest.MustUser(t, e.d, domaintest.Uniq("u"))
			var ids []weibo.MediaID
			for i := range 3 {
				m, err := e.m.Upload(ctx, u.ID, picture(byte(30+i)), nil)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			const racers = 8
			var wg sync.WaitGroup
			posts := make(chan weibo.PostID, racers)
			for i := range racers {
				wg.Go(func() {
					// Each racer lists the pictures in its own order.
					order := []weibo.MediaID{ids[i%3], ids[(i+1)%3], ids[(i+2)%3]}
					p, err := e.d.Feed.Publish(ctx, u.ID, "", order...)
					if err != nil {
						if weibo.CodeOf(err) != weibo.CodeBadUserInput {
							t.Errorf("racer %d: %v", i, err)
						}
						return
					}
					posts <- p.ID
				})
			}
			wg.Wait()
			close(posts)
			var won []weibo.PostID
			for p := range posts {
				won = append(won, p)
			}
			if len(won) != 1 {
				t.Fatalf("%d publishes stored, want 1", len(won))
			}
			ms, err := e.m.Get(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m == nil || m.Post == nil || *m.Post != won[0] {
					t.Errorf("media %+v not attached to the stored post %s", m, won[0])
				}
			}
			// The refused publishes left their outbox rows (and the
			// markers of their other parts) to the repairer: a restart
			// past the grace repairs them.
			e.clk.Advance(time.Minute)
			d2 := domaintest.Quiet(e.st, e.clk.Option(), domain.WithRepairGrace(2*time.Second))
			if err := d2.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d2.Close(context.Background()) }()
			domaintest.WaitQuiet(t, d2, time.Minute)
			if is := fsckIssues(t, d2, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}
