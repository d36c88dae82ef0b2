package media_test

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/moderation/report"
)

// TestReportHoldsPicture: a report of a post with a picture keeps the
// picture's bytes after the post's delete, until it is resolved; a
// reopened report holds nothing that went meanwhile.
func TestReportHoldsPicture(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			e, ctx := newEnv(t, b), t.Context()
			author := domaintest.MustUser(t, e.d, domaintest.Uniq("a"))
			reporter := domaintest.MustUser(t, e.d, domaintest.Uniq("r"))
			mod := domaintest.MustUser(t, e.d, domaintest.Uniq("m"))
			m, err := e.m.Upload(ctx, author.ID, picture(11), nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.d.Feed.Publish(ctx, author.ID, "look", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := e.d.Reports.Create(ctx, reporter.ID, report.Input{Target: author.ID, Posts: []weibo.PostID{p.ID}, Category: report.CategorySpam})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Media) != 1 || rep.Media[0] != m.ID {
				t.Errorf("report media %v", rep.Media)
			}
			if _, err := e.d.Feed.DeletePost(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			_, err = e.m.Variant(ctx, m.ID, process.Large)
			wantCode(t, err, weibo.CodeNotFound, "")
			if data, refs := blobRows(t, e.st); data != 3 || refs != 3 {
				t.Errorf("the post deleted, the report open: %d blobs, %d references; want 3, 3 (the report's)", data, refs)
			}
			if _, err := e.d.Reports.Resolve(ctx, mod.ID, rep.ID, report.ActionDismiss, nil, nil); err != nil {
				t.Fatal(err)
			}
			if data, refs := blobRows(t, e.st); data != 0 || refs != 0 {
				t.Errorf("the report resolved: %d blobs, %d references; want none", data, refs)
			}
			domaintest.WaitQuiet(t, e.d, time.Minute)
			if is := fsckIssues(t, e.d, false); len(is) != 0 {
				t.Errorf("fsck: %+v", is)
			}
		})
	}
}
