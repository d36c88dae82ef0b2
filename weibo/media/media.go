// Package media stores pictures: uploads, their content-addressed
// variant bytes in weibo:media (a MOB family on HBase), the counted
// references that keep each blob while something holds it, the attach of
// a post's pictures on publish and their release when it goes, the 24-hour
// life of an upload nobody attached, and its fsck check. The processing of
// an upload's bytes is package weibo/media/process's; this package takes
// its Result.
package media

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/tables"
)

// MaxAltLength is the longest alt text, in code points.
const MaxAltLength = 1500

// MaxPerPost is how many pictures one post carries at most (九宫格).
const MaxPerPost = 9

// Media is one uploaded picture.
type Media struct {
	// ID is its id ("media:<n>").
	ID weibo.MediaID
	// Owner is the user who uploaded it.
	Owner weibo.UserID
	// Alt is its alt text; nil when none.
	Alt *string
	// Blurhash is the blurhash of the picture.
	Blurhash string
	// Variants are its sizes, by variant.
	Variants map[process.Variant]VariantInfo
	// Post is the post it is attached to; nil while unattached.
	Post *weibo.PostID
	// CreatedAt is when it was uploaded (ms precision).
	CreatedAt time.Time
}

// NodeID returns m's global id (weibo.Node).
func (m *Media) NodeID() weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeMedia, Media: m.ID} }

// VariantInfo describes one stored variant: MIME type, size in pixels,
// size in bytes, and the sha256 of its bytes (its blob).
type VariantInfo struct {
	MIME          string
	Width, Height int
	Bytes         int64
	Hash          [32]byte
}

// Blob is the bytes of one variant, with its MIME type and sha256.
type Blob struct {
	Data []byte
	MIME string
	Hash [32]byte
}

// Service is the media module. New builds it.
type Service struct {
	st       hbase.Store
	w        *counted.Protocol
	refs     *counted.Relation
	refSteps counted.Steps
	attaches *counted.Relation
}

// New builds the media module over st and the protocol w, and registers
// with them: the blob-reference relation ("mediaref") and its counter
// (mediaRefCount), the attach relation ("attach"), the sweep of uploads
// never attached (a repair of every repairer pass), the fsck check, and
// with f the part of a publish with pictures and of a post's delete
// (feed.Service.RegisterMedia). Call it while the domain is wired, before
// any call.
func New(st hbase.Store, w *counted.Protocol, f *feed.Service) *Service {
	s := &Service{st: st, w: w, refSteps: counted.StepsOf(RelationRef)}
	s.refs = s.refRelation()
	s.attaches = s.attachRelation()
	w.Register(s.refs)
	w.RegisterCounter(s.refCounterSpec())
	w.Register(s.attaches)
	w.RegisterRepair(s.Sweep)
	w.RegisterCheck(s.check())
	if f != nil {
		f.RegisterMedia(s.CheckAttach, s.part)
	}
	return s
}

// Upload stores the processed picture r as owner's new upload, with alt
// text alt (nil or "" for none), and returns it. The variants' bytes are
// stored once per content (sha256): an identical upload adds a reference
// to the blobs there. The upload lives 24 hours unless attached to a post
// (feed.Service.Publish with media). Errors: BAD_USER_INPUT (field "alt") for an alt
// text too long or not UTF-8; the store's.
//
// Writes, in order: each blob's data (when missing); the expiry row
// (naming the blobs, so a crash anywhere after it is released by the
// sweep); a reference of each blob (counted, addRef); the media row, in
// the upload family whose TTL ends it.
func (s *Service) Upload(ctx context.Context, owner weibo.UserID, r *process.Result, alt *string) (_ *Media, err error) {
	defer weibo.Wrapf(&err, "upload media by %s", owner)
	alt, err = checkAlt(alt)
	if err != nil {
		return nil, err
	}
	if r == nil || len(r.Images) == 0 {
		return nil, weibo.BadInput("file", "no picture")
	}
	now := s.w.NowMillis()
	id := tables.NewMediaID(now, rand.Uint64())
	m := &Media{ID: id, Owner: owner, Alt: alt, Blurhash: r.Blurhash, CreatedAt: time.UnixMilli(now),
		Variants: make(map[process.Variant]VariantInfo, len(r.Images))}
	var vs []tables.MediaVariant
	var blobs []blob
	seen := map[[32]byte]bool{}
	for _, img := range r.Images {
		h := sha256.Sum256(img.Data)
		info := VariantInfo{MIME: img.MIME, Width: img.Width, Height: img.Height, Bytes: int64(len(img.Data)), Hash: h}
		m.Variants[img.Variant] = info
		vs = append(vs, tables.MediaVariant{Name: string(img.Variant), MIME: info.MIME, Width: info.Width, Height: info.Height, Bytes: info.Bytes, Hash: h})
		if !seen[h] {
			seen[h] = true
			blobs = append(blobs, blob{hash: h, mime: img.MIME, data: img.Data})
		}
	}
	var hashes []byte
	for _, b := range blobs {
		hashes = append(hashes, b.hash[:]...)
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Media, Row: tables.MediaExpiryKey(now+tables.MediaUploadTTL.Milliseconds(), id),
		Values: hbase.Values{tables.FamMediaRef: {tables.ColMediaRefAt: tables.EncodeMillis(now), tables.ColMediaExpiryHashes: hashes}}}); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, StepUploadExpiry); err != nil {
		return nil, err
	}
	for _, b := range blobs {
		if err := s.addRef(ctx, b, tables.HolderMedia, uint64(id)); err != nil {
			return nil, err
		}
	}
	cells := map[string][]byte{
		tables.ColMediaOwner: tables.U64(uint64(owner)), tables.ColMediaBlurhash: []byte(r.Blurhash),
		tables.ColMediaVariants: tables.EncodeMediaVariants(vs), tables.ColMediaCreated: tables.EncodeMillis(now),
	}
	if alt != nil {
		cells[tables.ColMediaAlt] = []byte(*alt)
	}
	// The cells' version is the upload's time: the family's TTL counts
	// from it.
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Media, Row: tables.MediaKey(id), Timestamp: now,
		Values: hbase.Values{tables.FamMediaUpload: cells}}, tables.FamMediaUpload, tables.ColMediaOwner, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("media id %s taken", id)
	}
	return m, s.w.Step(ctx, StepUploadStored)
}

// checkAlt checks an alt text: nil for none or "", BAD_USER_INPUT (field
// "alt") for invalid UTF-8 or more than MaxAltLength code points.
func checkAlt(alt *string) (*string, error) {
	if alt == nil || *alt == "" {
		return nil, nil
	}
	if !utf8.ValidString(*alt) || utf8.RuneCountInString(*alt) > MaxAltLength {
		return nil, weibo.BadInput("alt", "alt text must be valid UTF-8 of at most %d characters", MaxAltLength)
	}
	return alt, nil
}

// UpdateAlt sets the alt text of viewer's unattached upload id (nil or ""
// removes it) and returns the media. Errors: NOT_FOUND for an unknown or
// expired id; FORBIDDEN when viewer does not own it; BAD_USER_INPUT
// (field "id") once it is attached, (field "alt") for a bad alt text.
func (s *Service) UpdateAlt(ctx context.Context, viewer weibo.UserID, id weibo.MediaID, alt *string) (_ *Media, err error) {
	defer weibo.Wrapf(&err, "update media %s", id)
	alt, err = checkAlt(alt)
	if err != nil {
		return nil, err
	}
	ms, err := s.Get(ctx, []weibo.MediaID{id})
	if err != nil {
		return nil, err
	}
	m := ms[0]
	switch {
	case m == nil:
		return nil, weibo.NotFoundOn("id", "no such media")
	case m.Owner != viewer:
		return nil, weibo.Forbidden("not your media")
	case m.Post != nil:
		return nil, weibo.BadInput("id", "media attached to a post can no longer change")
	}
	row := tables.MediaKey(id)
	var ok bool
	// Conditional on the media being unattached (no m:p): an attach in
	// between copied the row as it was.
	if alt != nil {
		ok, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Media, Row: row, Timestamp: m.CreatedAt.UnixMilli(),
			Values: hbase.Values{tables.FamMediaUpload: {tables.ColMediaAlt: []byte(*alt)}}}, tables.FamMediaAttached, tables.ColMediaPost, nil)
	} else {
		ok, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: row,
			Values: hbase.Values{tables.FamMediaUpload: {tables.ColMediaAlt: nil}}}, tables.FamMediaAttached, tables.ColMediaPost, nil)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, weibo.BadInput("id", "media attached to a post can no longer change")
	}
	m.Alt = alt
	return m, nil
}

// Get reads media by id with one GetMany: one entry per id, nil for an
// unknown or expired one.
func (s *Service) Get(ctx context.Context, ids []weibo.MediaID) (_ []*Media, err error) {
	defer weibo.Wrap(&err, "get media")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Media, Row: tables.MediaKey(id), Families: []string{tables.FamMediaUpload, tables.FamMediaAttached}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Media, len(ids))
	for i, r := range rs {
		out[i] = fromRow(ids[i], r)
	}
	return out, nil
}

// fromRow decodes a media row: its attached family when it has one, else
// its upload family; nil when neither holds an owner.
func fromRow(id weibo.MediaID, r *hbase.Result) *Media {
	fam := tables.FamMediaAttached
	if r.Value(fam, tables.ColMediaOwner) == nil {
		fam = tables.FamMediaUpload
	}
	owner := r.Value(fam, tables.ColMediaOwner)
	vs, ok := tables.DecodeMediaVariants(r.Value(fam, tables.ColMediaVariants))
	if len(owner) != 8 || !ok {
		return nil
	}
	m := &Media{ID: id, Owner: weibo.UserID(tables.DecodeU64(owner)), Blurhash: string(r.Value(fam, tables.ColMediaBlurhash)),
		CreatedAt: time.UnixMilli(int64(tables.DecodeU64(r.Value(fam, tables.ColMediaCreated)))),
		Variants:  make(map[process.Variant]VariantInfo, len(vs))}
	if a := r.Value(fam, tables.ColMediaAlt); a != nil {
		s := string(a)
		m.Alt = &s
	}
	for _, v := range vs {
		m.Variants[process.Variant(v.Name)] = VariantInfo{MIME: v.MIME, Width: v.Width, Height: v.Height, Bytes: v.Bytes, Hash: v.Hash}
	}
	if p, ok := tables.DecodeMediaPost(r.Value(tables.FamMediaAttached, tables.ColMediaPost)); ok && fam == tables.FamMediaAttached {
		m.Post = &p
	}
	return m
}

// Variant reads the bytes of variant v of media id. Errors: NOT_FOUND
// when the media is unknown, expired or released with its deleted post,
// or has no such variant; the store's.
func (s *Service) Variant(ctx context.Context, id weibo.MediaID, v process.Variant) (_ *Blob, err error) {
	defer weibo.Wrapf(&err, "media %s %s", id, v)
	ms, err := s.Get(ctx, []weibo.MediaID{id})
	if err != nil {
		return nil, err
	}
	if ms[0] == nil {
		return nil, weibo.NotFound("no such media")
	}
	info, ok := ms[0].Variants[v]
	if !ok {
		return nil, weibo.NotFound("no such variant")
	}
	return s.blob(ctx, info.Hash)
}

// blob reads the blob of hash; NOT_FOUND when its data is gone.
func (s *Service) blob(ctx context.Context, hash [32]byte) (*Blob, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: tables.BlobKey(hash), Families: []string{tables.FamMediaData}})
	if err != nil {
		return nil, err
	}
	mime := r.Value(tables.FamMediaData, tables.ColBlobMIME)
	if mime == nil {
		return nil, weibo.NotFound("no such media")
	}
	return &Blob{Data: r.Value(tables.FamMediaData, tables.ColBlobData), MIME: string(mime), Hash: hash}, nil
}
