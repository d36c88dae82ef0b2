package media

import (
	"context"
	"encoding/hex"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Issue kinds of the media check (`gateway fsck`).
const (
	// IssueRefMissing: a media row's blob without the media's reference
	// (repaired by adding it, when the blob's data is there).
	IssueRefMissing = "media-ref-missing"
	// IssueRefDangling: a media's reference without its media row nor an
	// expiry row that will release it (repaired by dropping it).
	IssueRefDangling = "media-ref-dangling"
	// IssueBlobMissing: a referenced blob without its data (reported: the
	// bytes are lost).
	IssueBlobMissing = "media-blob-missing"
	// IssueBlobOrphan: a blob's data without any reference (repaired by
	// the relation's collect).
	IssueBlobOrphan = "media-blob-orphan"
	// IssueRefCount: a blob's refCount off its reference rows (recounted).
	IssueRefCount = "media-ref-count"
	// IssuePostGone: a media attached to a post that is not stored
	// (repaired by releasing it).
	IssuePostGone = "media-post-gone"
	// IssueNotAttached: a post's media not attached to it (repaired by
	// the attach's settle).
	IssueNotAttached = "media-not-attached"
	// IssueReportHeld: what a report that is not OPEN (resolved, or
	// gone) still holds — its holder row or a reference of kind 'q'
	// without one (repaired by releasing it).
	IssueReportHeld = "media-report-held"
)

// checkBlob is what one fsck run read of a blob and its references.
type checkBlob struct {
	data    bool
	count   int64
	ts      int64
	refs    []checkRef
	counted bool // the blob row has a refCount cell
}

type checkRef struct {
	kind   tables.MediaHolder
	holder uint64
	ts     int64
}

// checkMedia is what one fsck run read of a media row.
type checkMedia struct {
	post   *weibo.PostID
	hashes [][32]byte
	ts     int64
	row    *hbase.Result
}

// check is the media module's fsck check: one scan of weibo:media, the
// posts' media lists from fsck's scan of weibo:content.
func (s *Service) check() check.Check {
	return check.Check{Name: "media", Start: func(p *check.Pass) check.Run {
		posts := map[weibo.PostID][]weibo.MediaID{}
		return check.Run{
			Content: func(id weibo.PostID, r *hbase.Result) {
				if ids := tables.DecodeMediaIDs(r.Value(tables.FamPost, tables.ColPostMedia)); ids != nil {
					posts[id] = ids
				}
			},
			Check: func(ctx context.Context) error { return s.runCheck(ctx, p, posts) },
		}
	}}
}

// runCheck reads weibo:media whole and reports every issue kind above.
func (s *Service) runCheck(ctx context.Context, p *check.Pass, posts map[weibo.PostID][]weibo.MediaID) error {
	media := map[weibo.MediaID]*checkMedia{}
	blobs := map[[32]byte]*checkBlob{}
	expiring := map[weibo.MediaID]bool{}
	holders := map[weibo.ReportID]int64{} // the reports' holder rows, by their newest cell
	blobOf := func(h [32]byte) *checkBlob {
		if blobs[h] == nil {
			blobs[h] = &checkBlob{}
		}
		return blobs[h]
	}
	err := p.Scan(ctx, &hbase.Scan{Table: tables.Media}, func(r *hbase.Result) {
		ts := check.NewestTS(r)
		if id, ok := tables.DecodeMediaKey(r.Row); ok {
			m := &checkMedia{hashes: rowHashes(r), ts: ts, row: r}
			if at, ok := tables.DecodeMediaPost(r.Value(tables.FamMediaAttached, tables.ColMediaPost)); ok {
				m.post = &at
			}
			media[id] = m
			return
		}
		if _, id, ok := tables.DecodeMediaExpiryKey(r.Row); ok {
			expiring[id] = true
			return
		}
		if kind, holder, ok := tables.DecodeMediaHolderKey(r.Row); ok && kind == tables.HolderReport {
			holders[weibo.ReportID(holder)] = ts
			return
		}
		h, ref, kind, holder, ok := tables.DecodeBlobKey(r.Row)
		if !ok {
			return
		}
		b := blobOf(h)
		if ref {
			b.refs = append(b.refs, checkRef{kind: kind, holder: holder, ts: ts})
			return
		}
		b.data = r.Value(tables.FamMediaData, tables.ColBlobMIME) != nil
		b.ts = ts
		if c := r.Value(tables.FamCount, tables.ColBlobRefCount); c != nil {
			b.count, b.counted = int64(tables.DecodeU64(c)), true
		}
	})
	if err != nil {
		return err
	}
	for id, m := range media {
		for _, h := range m.hashes {
			b := blobOf(h)
			has := false
			for _, r := range b.refs {
				has = has || (r.kind == tables.HolderMedia && r.holder == uint64(id))
			}
			if has {
				continue
			}
			fix := func() (bool, error) {
				bl, err := s.blob(ctx, h)
				if err != nil {
					return false, nil
				}
				return true, s.addRef(ctx, blob{hash: h, mime: bl.MIME, data: bl.Data}, tables.HolderMedia, uint64(id))
			}
			if err := p.Issue(IssueRefMissing, m.ts, fix, "media %s: no reference to its blob %x", id, h[:8]); err != nil {
				return err
			}
		}
		if m.post != nil && !p.PostExists(*m.post) {
			row := m.row
			fix := func() (bool, error) { return true, s.release(ctx, id, row) }
			if err := p.Issue(IssuePostGone, m.ts, fix, "media %s attached to post %s, which is gone", id, m.post); err != nil {
				return err
			}
		}
	}
	for post, ids := range posts {
		for _, id := range ids {
			if m := media[id]; m != nil && m.post != nil && *m.post == post {
				continue
			}
			fix := func() (bool, error) { return true, s.settleAttach(ctx, post, []weibo.MediaID{id}) }
			if err := p.Issue(IssueNotAttached, post.Millis, fix, "post %s: media %s not attached to it", post, id); err != nil {
				return err
			}
		}
	}
	if err := s.checkReports(ctx, p, holders, blobs); err != nil {
		return err
	}
	for h, b := range blobs {
		for _, r := range b.refs {
			if r.kind != tables.HolderMedia || media[weibo.MediaID(r.holder)] != nil || expiring[weibo.MediaID(r.holder)] {
				continue
			}
			holder := r.holder
			fix := func() (bool, error) { return true, s.dropRef(ctx, h, tables.HolderMedia, holder) }
			if err := p.Issue(IssueRefDangling, r.ts, fix, "blob %x: reference of media %d, which is gone", h[:8], holder); err != nil {
				return err
			}
		}
		if len(b.refs) > 0 && !b.data {
			if err := p.Issue(IssueBlobMissing, 0, nil, "blob %x: %d references, no data", h[:8], len(b.refs)); err != nil {
				return err
			}
		}
		if len(b.refs) == 0 && b.data {
			fix := func() (bool, error) { return true, s.collect(ctx, h) }
			if err := p.Issue(IssueBlobOrphan, b.ts, fix, "blob %x: data without references", h[:8]); err != nil {
				return err
			}
		}
		if b.count != int64(len(b.refs)) && (b.counted || len(b.refs) > 0) {
			c := refCounter(h)
			if err := p.Issue(IssueRefCount, b.ts, s.w.RecountOne(ctx, c), "blob %s: refCount %d, %d references",
				hex.EncodeToString(h[:8]), b.count, len(b.refs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkReports reports what reports that are not OPEN still hold: their
// holder rows, and references of kind 'q' of reports without a holder
// row. One batched read of the reports.
func (s *Service) checkReports(ctx context.Context, p *check.Pass, holders map[weibo.ReportID]int64, blobs map[[32]byte]*checkBlob) error {
	type loose struct {
		hash [32]byte
		ts   int64
	}
	orphans := map[weibo.ReportID][]loose{}
	for h, b := range blobs {
		for _, r := range b.refs {
			if _, held := holders[weibo.ReportID(r.holder)]; r.kind == tables.HolderReport && !held {
				orphans[weibo.ReportID(r.holder)] = append(orphans[weibo.ReportID(r.holder)], loose{h, r.ts})
			}
		}
	}
	var ids []weibo.ReportID
	for id := range holders {
		ids = append(ids, id)
	}
	for id := range orphans {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Reports, Row: tables.ReportKey(id), Families: []string{tables.FamReport}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return err
	}
	for i, id := range ids {
		p.CountRow(tables.Reports)
		if st, ok := tables.DecodeReportState(rs[i].Value(tables.FamReport, tables.ColReportState)); ok && st.Status == tables.ReportOpen {
			continue
		}
		if ts, held := holders[id]; held {
			fix := func() (bool, error) { return true, s.Release(ctx, id) }
			if err := p.Issue(IssueReportHeld, ts, fix, "%s is not open and holds pictures", id); err != nil {
				return err
			}
			continue
		}
		for _, l := range orphans[id] {
			fix := func() (bool, error) { return true, s.dropRef(ctx, l.hash, tables.HolderReport, uint64(id)) }
			if err := p.Issue(IssueReportHeld, l.ts, fix, "%s is not open and holds blob %x", id, l.hash[:8]); err != nil {
				return err
			}
		}
	}
	return nil
}
