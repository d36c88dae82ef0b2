// Package documents keeps the trusted documents: the GraphQL documents an
// app's clients run by id (persisted operations used as an allowlist),
// registered by `gateway documents add` from an Apollo persisted query
// manifest or a Relay persistConfig output (ParseManifest) and read by the
// server when a request names one. A document's id is the SHA-256 of its
// text, written "sha256:<64 lower-case hex>" (the persisted documents
// proposal's form; Apollo's sha256Hash is the hex alone). Its row in
// weibo:documents (weibo/tables/documents.go, docs/schema.md) is written
// once and never changed, so a copy held in memory never goes stale.
package documents

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// IDPrefix starts every document id.
const IDPrefix = "sha256:"

// Document is a registered document.
type Document struct {
	// ID is "sha256:" and the lower-case hex SHA-256 of Text.
	ID string
	// Text is the document as registered, UTF-8.
	Text string
	// Names are the names of its operations in document order (none for a
	// document of one anonymous operation).
	Names []string
	// Added is when the document was first added (ms precision); zero for
	// a document not yet stored.
	Added time.Time
	// Source is the base name of the manifest file it was first added
	// from.
	Source string
}

// IDOf returns the id of document text: "sha256:<hex>".
func IDOf(text string) string {
	return IDPrefix + hex.EncodeToString(tables.DocumentKey(text))
}

// ParseID returns the SHA-256 a document id names; it takes "sha256:<hex>"
// and, as Apollo's persistedQuery.sha256Hash sends it, the hex alone (64
// hex digits, either case). ok is false for anything else.
func ParseID(id string) (sum [32]byte, ok bool) {
	h := strings.TrimPrefix(id, IDPrefix)
	if len(h) != 2*len(sum) {
		return sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(h)); err != nil {
		return sum, false
	}
	return sum, true
}

// Service adds, reads and lists the documents of one store. It is safe for
// concurrent use.
type Service struct {
	st  hbase.Store
	now func() time.Time
}

// New returns the documents of st (migrated: weibo:documents exists). now
// is the clock (nil: time.Now).
func New(st hbase.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now}
}

// Add stores docs, each one row written with CheckAndPut (its text cell
// absent), and returns how many were new; a document already stored keeps
// its row (when and where it was first added). The caller has validated
// every document against the schema (the server's ValidateDocument) before
// calling: Add checks only that each ID is its Text's. source is the
// manifest's base name. Errors: BAD_USER_INPUT for a document whose ID is
// not its text's (nothing is written then); the store's, after which the
// documents before the failing one are stored and adding them again is
// harmless.
func (s *Service) Add(ctx context.Context, source string, docs []Document) (added int, err error) {
	defer weibo.Wrap(&err, "add documents")
	for _, d := range docs {
		if d.ID != IDOf(d.Text) {
			return 0, weibo.BadInput("id", "document %s is not the SHA-256 of its text (%s)", weibo.Excerpt(d.ID), IDOf(d.Text))
		}
	}
	at := tables.EncodeMillis(s.now().UnixMilli())
	for _, d := range docs {
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Documents, Row: tables.DocumentKey(d.Text), Values: hbase.Values{tables.FamDocument: {
			tables.ColDocText:   []byte(d.Text),
			tables.ColDocNames:  []byte(strings.Join(d.Names, ",")),
			tables.ColDocAdded:  at,
			tables.ColDocSource: []byte(source),
		}}}, tables.FamDocument, tables.ColDocText, nil)
		if err != nil {
			return added, err
		}
		if ok {
			added++
		}
	}
	return added, nil
}

// Get returns the document of id ("sha256:<hex>" or the hex alone), nil
// when none is stored (or id is malformed): one Get. Errors are the
// store's.
func (s *Service) Get(ctx context.Context, id string) (_ *Document, err error) {
	defer weibo.Wrap(&err, "get document")
	sum, ok := ParseID(id)
	if !ok {
		return nil, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Documents, Row: sum[:]})
	if err != nil || !r.Exists() {
		return nil, err
	}
	return documentOf(r)
}

// List returns every stored document, in rowkey (id) order. Errors are
// the store's.
func (s *Service) List(ctx context.Context) (_ []*Document, err error) {
	defer weibo.Wrap(&err, "list documents")
	var out []*Document
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Documents}, func(r *hbase.Result) error {
		d, err := documentOf(r)
		if err != nil {
			return err
		}
		if d != nil {
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// documentOf decodes a row of weibo:documents; nil for a row that is not
// a document (a key of another length, no text cell), and an error for a
// row whose text is not its key's.
func documentOf(r *hbase.Result) (*Document, error) {
	sum, ok := tables.DecodeDocumentKey(r.Row)
	text := r.Value(tables.FamDocument, tables.ColDocText)
	if !ok || text == nil {
		return nil, nil
	}
	d := &Document{ID: IDPrefix + hex.EncodeToString(sum[:]), Text: string(text),
		Source: string(r.Value(tables.FamDocument, tables.ColDocSource))}
	if d.ID != IDOf(d.Text) {
		return nil, fmt.Errorf("document row %x holds the text of another hash", sum)
	}
	if n := r.Value(tables.FamDocument, tables.ColDocNames); len(n) > 0 {
		d.Names = strings.Split(string(n), ",")
	}
	if ms := tables.DecodeU64(r.Value(tables.FamDocument, tables.ColDocAdded)); ms > 0 {
		d.Added = time.UnixMilli(int64(ms))
	}
	return d, nil
}
