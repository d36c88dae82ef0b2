package media

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The references of a blob: a counted relation ("mediaref", marker kind
// tables.PendingMediaRef on (holder, holder kind), the blob's sha256 in
// the marker's extra bytes). Its AUTHORITY is the reference row (hash,
// holder kind, holder) — a media row whose variant the blob is, or an
// unresolved report of the media's post —; its DEPENDENT is the blob's
// data: stored while a reference stands, deleted once none does; its
// counter is the blob's refCount (blob row c:n), the number of its
// reference rows.
//
// A reference is added by whoever holds the bytes (an upload): the blob's
// data is written before the reference, and after the reference the
// refCount's sequence is bumped again (the fence) and the data written
// again if it went meanwhile. A blob's data is deleted only by collect:
// it reads the sequence, finds no reference, and deletes the data with a
// CheckAndDelete expecting that sequence. A collect whose read of the
// references missed a new one read the sequence before that reference's
// fence, so its delete fails, or it deleted before the fence, and the
// adder, re-reading after its fence, writes the data again.

// RelationRef names the counted relation of blob references.
const RelationRef = "mediaref"

// RefCount is the counter of a blob's references (blob row c:n).
const RefCount counted.CounterKind = "mediaRefCount"

// maxCollect bounds collect's rounds against concurrent references.
const maxCollect = 8

// refRelation is the relation of blob references.
func (s *Service) refRelation() *counted.Relation {
	return &counted.Relation{
		Name:     RelationRef,
		Marker:   tables.PendingMediaRef,
		Phases:   []counted.Phase{counted.PhaseDecided},
		Counters: func(uint64, uint64) []counted.Counter { return nil },
		CountersWith: func(_, _ uint64, extra []byte) []counted.Counter {
			if len(extra) != 32 {
				return nil
			}
			return []counted.Counter{refCounter([32]byte(extra))}
		},
		Settle: func(ctx context.Context, _, _ uint64, extra []byte) error {
			if len(extra) != 32 {
				return nil
			}
			return s.collect(ctx, [32]byte(extra))
		},
	}
}

// refCounter is the refCount of the blob of hash.
func refCounter(hash [32]byte) counted.Counter {
	return counted.Counter{Kind: RefCount, Name: hex.EncodeToString(hash[:])}
}

// hashOf is the hash a refCount counter names.
func hashOf(c counted.Counter) (h [32]byte, ok bool) {
	b, err := hex.DecodeString(c.Name)
	if err != nil || len(b) != 32 {
		return h, false
	}
	return [32]byte(b), true
}

// refCounterSpec is the refCount's cell and recount: the reference rows
// under the blob's key.
func (s *Service) refCounterSpec() *counted.CounterSpec {
	return &counted.CounterSpec{
		Kind: RefCount,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			h, _ := hashOf(c)
			return tables.Media, tables.BlobKey(h), tables.ColBlobRefCount, tables.ColBlobRefSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			h, ok := hashOf(c)
			if !ok {
				return 0, false, nil
			}
			n, err := s.countRefs(ctx, h, 0)
			return n, true, err
		},
	}
}

// countRefs counts the reference rows of the blob of hash, at most limit
// (0: all).
func (s *Service) countRefs(ctx context.Context, hash [32]byte, limit int) (int64, error) {
	var n int64
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Media, Prefix: tables.BlobKey(hash), Families: []string{tables.FamMediaRef}, Limit: limit},
		func(r *hbase.Result) error {
			if _, ref, _, _, ok := tables.DecodeBlobKey(r.Row); ok && ref {
				n++
			}
			return nil
		})
	return n, err
}

// blob is the bytes of one variant to reference.
type blob struct {
	hash [32]byte
	mime string
	data []byte
}

// putData writes b's data unless the blob row has it.
func (s *Service) putData(ctx context.Context, b blob) error {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: tables.BlobKey(b.hash), Families: []string{tables.FamMediaData}})
	if err != nil || r.Value(tables.FamMediaData, tables.ColBlobMIME) != nil {
		return err
	}
	return s.st.Put(ctx, &hbase.Put{Table: tables.Media, Row: tables.BlobKey(b.hash), Values: hbase.Values{
		tables.FamMediaData: {tables.ColBlobData: b.data, tables.ColBlobMIME: []byte(b.mime)}}})
}

// addRef makes holder reference blob b: the data, the marker, the
// reference row (CheckAndPut absent, the decided step), refCount +1 when
// this call wrote it, the fence and the data again if it went, the
// marker's end. Adding a reference that stands changes nothing.
func (s *Service) addRef(ctx context.Context, b blob, kind tables.MediaHolder, holder uint64) error {
	if err := s.putData(ctx, b); err != nil {
		return err
	}
	op, err := s.w.BeginWith(ctx, s.refs, holder, uint64(kind), b.hash[:])
	if err != nil {
		return err
	}
	added, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Media, Row: tables.MediaRefKey(b.hash, kind, holder),
		Values: hbase.Values{tables.FamMediaRef: {tables.ColMediaRefAt: tables.EncodeMillis(op.Start)}}},
		tables.FamMediaRef, tables.ColMediaRefAt, nil)
	if err != nil {
		return err
	}
	if err := s.w.Step(ctx, s.refSteps.Decided); err != nil {
		return err
	}
	if added {
		if _, err := s.w.Count(ctx, op, 1); err != nil {
			return err
		}
	}
	if _, err := s.w.Increments(ctx, s.w.SeqIncrement(refCounter(b.hash))); err != nil {
		return err
	}
	if err := s.putData(ctx, b); err != nil {
		return err
	}
	return s.w.End(ctx, op)
}

// dropRef removes holder's reference to the blob of hash: the marker, the
// reference row (CheckAndDelete expecting the value read, the decided
// step), refCount -1 when this call deleted it, collect, the marker's
// end. Dropping a reference that does not stand changes nothing.
func (s *Service) dropRef(ctx context.Context, hash [32]byte, kind tables.MediaHolder, holder uint64) error {
	op, err := s.w.BeginWith(ctx, s.refs, holder, uint64(kind), hash[:])
	if err != nil {
		return err
	}
	key := tables.MediaRefKey(hash, kind, holder)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: key, Families: []string{tables.FamMediaRef}})
	if err != nil {
		return err
	}
	dropped := false
	if at := r.Value(tables.FamMediaRef, tables.ColMediaRefAt); at != nil {
		if dropped, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: key},
			tables.FamMediaRef, tables.ColMediaRefAt, at); err != nil {
			return err
		}
	}
	if err := s.w.Step(ctx, s.refSteps.Decided); err != nil {
		return err
	}
	if dropped {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return err
		}
	}
	if err := s.collect(ctx, hash); err != nil {
		return err
	}
	return s.w.End(ctx, op)
}

// errBusy is collect's give-up: references kept coming and going.
var errBusy = fmt.Errorf("%w: blob references changing", counted.ErrUnsettled)

// collect makes the blob of hash agree with its references: with none,
// its data is deleted (CheckAndDelete expecting the refCount sequence read
// before the references were); with some, it is left as it is (a blob
// referenced without its data is fsck's). It is the relation's settle.
func (s *Service) collect(ctx context.Context, hash [32]byte) error {
	key := tables.BlobKey(hash)
	for range maxCollect {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Media, Row: key})
		if err != nil {
			return err
		}
		if r.Value(tables.FamMediaData, tables.ColBlobMIME) == nil && r.Value(tables.FamMediaData, tables.ColBlobData) == nil {
			return nil
		}
		seq := r.Value(tables.FamCount, tables.ColBlobRefSeq)
		n, err := s.countRefs(ctx, hash, 1)
		if err != nil || n > 0 {
			return err
		}
		ok, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Media, Row: key, Values: hbase.Values{tables.FamMediaData: nil}},
			tables.FamCount, tables.ColBlobRefSeq, seq)
		if err != nil || ok {
			return err
		}
	}
	return errBusy
}
