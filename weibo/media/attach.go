package media

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The attach of a post's pictures, and their release when the post goes:
// a relation of its own ("attach", marker kind tables.PendingMediaAttach
// on the post's (author, ms), the media ids in the marker's extra bytes),
// without counters. Its AUTHORITY is the post's content row, whose
// tables.ColPostMedia lists the media; its DEPENDENTS are the media rows:
// while the post is stored each is attached to it (family m, m:p = the
// post, its expiry row gone), once the post is gone each attached to it
// is released — the references of its blobs dropped (dropRef), then the
// row deleted. The publish's part marks before its content row and
// attaches there (so that a second publish of the same media fails
// before its own content row); a delete's part marks before the content
// row goes and releases after. A dead write's marker is settled by the
// repairer the same way (settleAttach).

// Steps of the media writes besides the protocol's.
var (
	// StepUploadExpiry follows an upload's expiry row.
	StepUploadExpiry = counted.Step(RelationAttach, "expiry")
	// StepUploadStored follows an upload's media row.
	StepUploadStored = counted.Step(RelationAttach, "uploaded")
	// StepAttached follows the attach of a publish's media rows.
	StepAttached = counted.Step(RelationAttach, "attached")
	// StepReleased follows the drop of one released media's references,
	// before its row's delete.
	StepReleased = counted.Step(RelationAttach, "released")
)

// RelationAttach names the attach relation.
const RelationAttach = "attach"

// attachRelation is the attach relation.
func (s *Service) attachRelation() *counted.Relation {
	return &counted.Relation{
		Name:     RelationAttach,
		Marker:   tables.PendingMediaAttach,
		Phases:   []counted.Phase{"expiry", "uploaded", "attached", "released"},
		Counters: func(uint64, uint64) []counted.Counter { return nil },
		Settle: func(ctx context.Context, author, ms uint64, extra []byte) error {
			return s.settleAttach(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)}, tables.DecodeMediaIDs(extra))
		},
	}
}

// CheckAttach checks that author may publish a post with media ids: 1 to
// MaxPerPost distinct ids of author's own uploads, not expired, not
// attached yet. Errors: BAD_USER_INPUT (field "mediaIds"); the store's.
func (s *Service) CheckAttach(ctx context.Context, author weibo.UserID, ids []weibo.MediaID) error {
	if len(ids) == 0 || len(ids) > MaxPerPost {
		return weibo.BadInput("mediaIds", "a post carries 1 to %d pictures, not %d", MaxPerPost, len(ids))
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return weibo.BadInput("mediaIds", "media %s listed twice", id)
		}
	}
	ms, err := s.Get(ctx, ids)
	if err != nil {
		return err
	}
	for i, m := range ms {
		switch {
		case m == nil:
			return weibo.BadInput("mediaIds", "no such media %s (unknown, or expired unattached)", ids[i])
		case m.Owner != author:
			return weibo.BadInput("mediaIds", "media %s is not yours", ids[i])
		case m.Post != nil:
			return weibo.BadInput("mediaIds", "media %s is attached to a post already", ids[i])
		}
	}
	return nil
}

// attachPart is the media's part of one publish or delete of a post.
type attachPart struct {
	s       *Service
	author  weibo.UserID
	ids     []weibo.MediaID
	publish bool
	op      *counted.Op
	at      *weibo.PostID // the post the media were attached to by this part
}

// part makes the part of a publish (publish true) or a delete of a post
// of author with media ids (feed.MediaPartMaker).
func (s *Service) part(author weibo.UserID, ids []weibo.MediaID, publish bool) feed.PostPart {
	if len(ids) == 0 {
		return nil
	}
	return &attachPart{s: s, author: author, ids: ids, publish: publish}
}

// Mark writes the marker for post id and, for a publish, attaches the
// media to it (for a publish that moved to the next millisecond, moves
// them from the id tried before), ending the marker of that earlier id.
// A media attached by another publish in between makes it undo its own
// attaches and fail with BAD_USER_INPUT (field "mediaIds").
func (p *attachPart) Mark(ctx context.Context, id weibo.PostID) error {
	op, err := p.s.w.BeginWith(ctx, p.s.attaches, uint64(id.Author), uint64(id.Millis), tables.EncodeMediaIDs(p.ids))
	if err != nil {
		return err
	}
	prev, prevOp := p.at, p.op
	p.op = op
	if p.publish {
		if err := p.attach(ctx, id, prev); err != nil {
			return err
		}
		p.at = &id
		if err := p.s.w.Step(ctx, StepAttached); err != nil {
			return err
		}
	}
	if prevOp != nil {
		return p.s.w.End(ctx, prevOp)
	}
	return nil
}

// attach points each media row at post id, in id order: its upload cells
// copied into family m with m:p, with CheckAndPut expecting m:p as prev
// left it (absent for the first attach).
func (p *attachPart) attach(ctx context.Context, id weibo.PostID, prev *weibo.PostID) error {
	var expect []byte
	if prev != nil {
		expect = tables.EncodeMediaPost(*prev)
	}
	// In id order, whatever the post's order: of publishes racing for the
	// same pictures, the one that takes the first takes them all.
	ids := slices.Clone(p.ids)
	slices.Sort(ids)
	rows, err := p.s.st.GetMany(ctx, mediaGets(ids))
	if err != nil {
		return err
	}
	for i, mid := range ids {
		r := rows[i]
		ok := false
		if cells := attachedCells(r, p.author, id); cells != nil {
			if ok, err = p.s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Media, Row: tables.MediaKey(mid),
				Values: hbase.Values{tables.FamMediaAttached: cells}}, tables.FamMediaAttached, tables.ColMediaPost, expect); err != nil {
				return err
			}
		}
		if !ok {
			// Taken (or gone) since CheckAttach: undo what this part
			// attached and refuse.
			for _, done := range ids[:i] {
				if _, err := p.s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaKey(done),
					Values: hbase.Values{tables.FamMediaAttached: nil}}, tables.FamMediaAttached, tables.ColMediaPost, tables.EncodeMediaPost(id)); err != nil {
					return err
				}
			}
			if err := p.s.w.End(ctx, p.op); err != nil {
				return err
			}
			return weibo.BadInput("mediaIds", "media %s is attached to a post already, or gone", mid)
		}
	}
	return nil
}

// attachedCells are the family-m cells attaching the media of row r to
// post id: its owner's upload cells with m:p; nil when r holds no upload
// of owner (unknown, expired, another's) or is attached to another post.
func attachedCells(r *hbase.Result, owner weibo.UserID, id weibo.PostID) map[string][]byte {
	fam := tables.FamMediaUpload
	if p := r.Value(tables.FamMediaAttached, tables.ColMediaPost); p != nil {
		fam = tables.FamMediaAttached
	}
	if o := r.Value(fam, tables.ColMediaOwner); len(o) != 8 || weibo.UserID(tables.DecodeU64(o)) != owner {
		return nil
	}
	cells := map[string][]byte{tables.ColMediaPost: tables.EncodeMediaPost(id)}
	for _, q := range []string{tables.ColMediaOwner, tables.ColMediaAlt, tables.ColMediaBlurhash, tables.ColMediaVariants, tables.ColMediaCreated} {
		if v := r.Value(fam, q); v != nil {
			cells[q] = v
		}
	}
	return cells
}

// Count has nothing to count: attaching changes no reference.
func (p *attachPart) Count(context.Context, int64) error { return nil }

// Settle settles the media with post id as the write left it (stored or
// gone), then ends the marker.
func (p *attachPart) Settle(ctx context.Context, id weibo.PostID, _ bool) error {
	if err := p.s.settleAttach(ctx, id, p.ids); err != nil {
		return err
	}
	return p.End(ctx)
}

// End ends the marker.
func (p *attachPart) End(ctx context.Context) error {
	if p.op == nil {
		return nil
	}
	return p.s.w.End(ctx, p.op)
}

// settleAttach makes media ids agree with post: while its content row is
// stored, each of author's unattached uploads among them is attached to
// it and its expiry row deleted; once it is gone, each attached to it is
// released. Media attached to another post, or gone, are left alone.
func (s *Service) settleAttach(ctx context.Context, post weibo.PostID, ids []weibo.MediaID) error {
	// One read: the post's content row, then each media row.
	rows, err := s.st.GetMany(ctx, append([]*hbase.Get{{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}}}, mediaGets(ids)...))
	if err != nil {
		return err
	}
	stored := tables.PostStored(rows[0])
	for i, id := range ids {
		r := rows[1+i]
		at, attached := tables.DecodeMediaPost(r.Value(tables.FamMediaAttached, tables.ColMediaPost))
		switch {
		case stored && !attached:
			if cells := attachedCells(r, post.Author, post); cells != nil {
				if _, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Media, Row: tables.MediaKey(id),
					Values: hbase.Values{tables.FamMediaAttached: cells}}, tables.FamMediaAttached, tables.ColMediaPost, nil); err != nil {
					return err
				}
			}
			if err := s.dropExpiry(ctx, id, r); err != nil {
				return err
			}
		case stored && at == post:
			if err := s.dropExpiry(ctx, id, r); err != nil {
				return err
			}
		case !stored && attached && at == post:
			if err := s.release(ctx, id, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropExpiry deletes the expiry row of media id (row r: its time from
// the created cell).
func (s *Service) dropExpiry(ctx context.Context, id weibo.MediaID, r *hbase.Result) error {
	ct := r.Value(tables.FamMediaAttached, tables.ColMediaCreated)
	if ct == nil {
		ct = r.Value(tables.FamMediaUpload, tables.ColMediaCreated)
	}
	if ct == nil {
		return nil
	}
	at := int64(tables.DecodeU64(ct)) + tables.MediaUploadTTL.Milliseconds()
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaExpiryKey(at, id)})
}

// release drops the references of attached media id (row r) to its
// blobs, then deletes its row (expecting the post it was attached to) and
// its expiry row.
func (s *Service) release(ctx context.Context, id weibo.MediaID, r *hbase.Result) error {
	for _, h := range rowHashes(r) {
		if err := s.dropRef(ctx, h, tables.HolderMedia, uint64(id)); err != nil {
			return err
		}
	}
	if err := s.w.Step(ctx, StepReleased); err != nil {
		return err
	}
	if err := s.dropExpiry(ctx, id, r); err != nil {
		return err
	}
	post := r.Value(tables.FamMediaAttached, tables.ColMediaPost)
	ok, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaKey(id)}, tables.FamMediaAttached, tables.ColMediaPost, post)
	if err != nil || !ok {
		return err
	}
	return s.clearRow(ctx, tables.MediaKey(id))
}

// clearRow deletes what a row delete of key left: the upload's cells,
// written at the upload's time by the writing gateway's clock, which a
// delete at the store's time does not reach when that clock ran ahead —
// each at its own timestamp.
func (s *Service) clearRow(ctx context.Context, key []byte) error {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: key})
	if err != nil || !r.Exists() {
		return err
	}
	dels := make([]*hbase.Delete, 0, len(r.Cells))
	for _, c := range r.Cells {
		dels = append(dels, &hbase.Delete{Table: tables.Media, Row: key, Values: hbase.Values{c.Family: {c.Qualifier: nil}}, Timestamp: c.Timestamp})
	}
	return s.st.DeleteMany(ctx, dels)
}

// rowHashes returns the distinct blob hashes of a media row's variants.
func rowHashes(r *hbase.Result) [][32]byte {
	v := r.Value(tables.FamMediaAttached, tables.ColMediaVariants)
	if v == nil {
		v = r.Value(tables.FamMediaUpload, tables.ColMediaVariants)
	}
	vs, _ := tables.DecodeMediaVariants(v)
	var out [][32]byte
	for _, x := range vs {
		if !slices.Contains(out, x.Hash) {
			out = append(out, x.Hash)
		}
	}
	return out
}

// Sweep releases the uploads never attached whose 24 hours ended before
// beforeMs (a counted.RepairFunc, run by every repairer pass): for each
// expiry row up to then, an attached media only loses the row; otherwise
// the references the row names are dropped, then the media row (its
// upload cells expired already) and the expiry row deleted.
func (s *Service) Sweep(ctx context.Context, beforeMs int64) (err error) {
	defer weibo.Wrap(&err, "sweep expired uploads")
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Media, Start: tables.MediaExpiryPrefix,
		Stop: tables.MediaExpiryKey(max(beforeMs, 0), 0), Limit: s.w.Batch()})
	if err != nil {
		return err
	}
	// The expired uploads' media rows, in one read.
	var expired []*hbase.Result
	var ids []weibo.MediaID
	for _, e := range rows {
		if _, id, ok := tables.DecodeMediaExpiryKey(e.Row); ok {
			expired, ids = append(expired, e), append(ids, id)
		}
	}
	media, err := s.st.GetMany(ctx, mediaGets(ids))
	if err != nil {
		return err
	}
	for i, e := range expired {
		id, r := ids[i], media[i]
		if r.Value(tables.FamMediaAttached, tables.ColMediaPost) == nil {
			for _, h := range splitHashes(e.Value(tables.FamMediaRef, tables.ColMediaExpiryHashes)) {
				if err := s.dropRef(ctx, h, tables.HolderMedia, uint64(id)); err != nil {
					return err
				}
			}
			ok, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: tables.MediaKey(id)},
				tables.FamMediaAttached, tables.ColMediaPost, nil)
			if err == nil && ok {
				err = s.clearRow(ctx, tables.MediaKey(id))
			}
			if err != nil {
				return err
			}
		}
		if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Media, Row: e.Row}); err != nil {
			return err
		}
	}
	return nil
}

// mediaGets is the Get of each media row of ids, for one GetMany.
func mediaGets(ids []weibo.MediaID) []*hbase.Get {
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Media, Row: tables.MediaKey(id)}
	}
	return gets
}
