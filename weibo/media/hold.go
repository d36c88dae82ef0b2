package media

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// A report holds the blobs of the reported posts' media while it is open
// (package weibo/moderation/report calls Hold and Release from its
// settle), so a reported picture outlives its post until the report is
// resolved: a reference of holder kind tables.HolderReport per blob,
// through the same counted relation, and a holder row naming the blobs,
// which Release reads once the media rows may be gone.

// Hold makes report hold the blobs of media ids (those still stored): the
// holder row first, then a reference of each blob it lacks. Holding what
// it holds changes nothing. Errors are the store's.
func (s *Service) Hold(ctx context.Context, report weibo.ReportID, ids []weibo.MediaID) (err error) {
	defer weibo.Wrapf(&err, "hold media of %s", report)
	if len(ids) == 0 {
		return nil
	}
	holder := tables.MediaHolderKey(tables.HolderReport, uint64(report))
	cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: holder})
	if err != nil {
		return err
	}
	hashes := splitHashes(cur.Value(tables.FamMediaRef, tables.ColMediaExpiryHashes))
	rs, err := s.st.GetMany(ctx, mediaGets(ids))
	if err != nil {
		return err
	}
	var add [][32]byte
	for _, r := range rs {
		for _, h := range rowHashes(r) {
			if !slices.Contains(hashes, h) {
				hashes, add = append(hashes, h), append(add, h)
			}
		}
	}
	if len(add) == 0 {
		return nil
	}
	var all []byte
	for _, h := range hashes {
		all = append(all, h[:]...)
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Media, Row: holder, Values: hbase.Values{tables.FamMediaRef: {
		tables.ColMediaRefAt: tables.EncodeMillis(s.w.NowMillis()), tables.ColMediaExpiryHashes: all}}}); err != nil {
		return err
	}
	for _, h := range add {
		b, err := s.blob(ctx, h)
		if weibo.CodeOf(err) == weibo.CodeNotFound {
			continue // gone already: nothing to hold
		}
		if err != nil {
			return err
		}
		if err := s.addRef(ctx, blob{hash: h, mime: b.MIME, data: b.Data}, tables.HolderReport, uint64(report)); err != nil {
			return err
		}
	}
	return nil
}

// Release drops report's references (Hold), then its holder row.
// Releasing what it does not hold changes nothing. Errors are the store's.
func (s *Service) Release(ctx context.Context, report weibo.ReportID) (err error) {
	defer weibo.Wrapf(&err, "release media of %s", report)
	holder := tables.MediaHolderKey(tables.HolderReport, uint64(report))
	cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: holder})
	if err != nil || !cur.Exists() {
		return err
	}
	for _, h := range splitHashes(cur.Value(tables.FamMediaRef, tables.ColMediaExpiryHashes)) {
		if err := s.dropRef(ctx, h, tables.HolderReport, uint64(report)); err != nil {
			return err
		}
	}
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Media, Row: holder})
}

// splitHashes splits concatenated sha256s.
func splitHashes(b []byte) [][32]byte {
	var out [][32]byte
	for i := 0; i+32 <= len(b); i += 32 {
		out = append(out, [32]byte(b[i:i+32]))
	}
	return out
}
