package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gqlstring"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// maxFirst bounds a page as the gateway's homeTimeline bounds first.
const maxFirst = 100

// rounds is how many inbox scans a page may take when entries are skipped
// (a post gone, an author no longer followed), as the gateway's
// timelineRounds.
const rounds = 9

// errUnsupported answers a page the floor does not serve: one the gateway
// would change by the viewer's blocks, mutes and filters or merge with the
// posts of followed large accounts. The full data set has neither.
var errUnsupported = errors.New("floor: the viewer has a safety row or follows a large account")

// pageHandler serves POST /graphql: the home page of the bearer token's
// user, the first `first` (variables.first, default 50) entries of
// weibo:inbox with their posts, written as the gateway answers home.js's
// query. Per page it makes the gateway's store calls: one Get of the
// large-accounts row in parallel with the prefix scan of the viewer's
// inbox (first + 1 rows), then one GetMany of the entries' content rows,
// the viewer's attends rows of their authors and of the large accounts,
// and the viewer's safety version cell. It has no post cache: every
// content row is read.
type pageHandler struct {
	st     hbase.Store
	tokens *auth.Issuer
	bufs   sync.Pool
}

func newPageHandler(st hbase.Store, tokens *auth.Issuer) *pageHandler {
	h := &pageHandler{st: st, tokens: tokens}
	h.bufs.New = func() any { return bytes.NewBuffer(make([]byte, 0, 32<<10)) }
	return h
}

// request is the part of a GraphQL request body the floor reads.
type request struct {
	Variables struct {
		First *int `json:"first"`
	} `json:"variables"`
}

func (h *pageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, "floor: no bearer token", http.StatusUnauthorized)
		return
	}
	t, err := h.tokens.Verify(tok)
	if err != nil {
		http.Error(w, "floor: "+err.Error(), http.StatusUnauthorized)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "floor: "+err.Error(), http.StatusBadRequest)
		return
	}
	first := 50
	if req.Variables.First != nil {
		first = *req.Variables.First
	}
	if first < 1 || first > maxFirst {
		http.Error(w, "floor: first must be between 1 and 100", http.StatusBadRequest)
		return
	}
	buf := h.bufs.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); h.bufs.Put(buf) }()
	if err := h.page(r.Context(), buf, t.User, first); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, errUnsupported) {
			code = http.StatusNotImplemented
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// entry is one inbox entry shown on the page.
type entry struct {
	key  []byte // the inbox rowkey
	id   weibo.PostID
	text []byte
	name []byte // the author's username, from the content row
}

// largeRes is the Get of the large-accounts row.
type largeRes struct {
	r   *hbase.Result
	err error
}

// page writes uid's page of first entries to buf.
func (h *pageHandler) page(ctx context.Context, buf *bytes.Buffer, uid weibo.UserID, first int) error {
	large := make(chan largeRes, 1)
	go func() {
		r, err := h.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.LargeKey, Families: []string{tables.FamInfo}})
		large <- largeRes{r, err}
	}()
	prefix := tables.InboxPrefix(uid)
	sc := hbase.Scan{Table: tables.Inbox, Prefix: prefix}
	var shown []entry
	more := false
	for round := 1; round <= rounds; round++ {
		sc.Limit = first + 1 - len(shown)
		rows, err := hbase.ScanAll(ctx, h.st, &sc)
		if err != nil {
			return err
		}
		var lr *largeRes
		if round == 1 {
			l := <-large
			if l.err != nil {
				return l.err
			}
			lr = &l
		}
		es, err := h.resolve(ctx, uid, rows, lr)
		if err != nil {
			return err
		}
		shown = append(shown, es...)
		if len(shown) > first {
			more = true
			shown = shown[:first]
			break
		}
		if len(rows) < sc.Limit {
			break
		}
		sc.Start = append(bytes.Clone(rows[len(rows)-1].Row), 0)
	}
	writePage(buf, prefix, shown, more, first)
	return nil
}

// resolve reads, in one GetMany, the content rows of rows' posts and the
// viewer's attends rows of their authors (with the first chunk, also of
// the large accounts, and the viewer's safety version cell), and returns
// the entries to show: those whose post exists and whose author is the
// viewer or followed.
func (h *pageHandler) resolve(ctx context.Context, uid weibo.UserID, rows []*hbase.Result, large *largeRes) ([]entry, error) {
	var largeIDs []weibo.UserID
	if large != nil {
		for _, c := range large.r.Family(tables.FamInfo) {
			if a, ok := tables.DecodeLargeQualifier(c.Qualifier); ok && a != uid {
				largeIDs = append(largeIDs, a)
			}
		}
	}
	ids := make([]weibo.PostID, len(rows))
	gets := make([]*hbase.Get, 0, 2*len(rows)+len(largeIDs)+1)
	for i, r := range rows {
		_, id, ok := tables.DecodeInboxKey(r.Row)
		if !ok {
			return nil, fmt.Errorf("floor: malformed inbox rowkey %x", r.Row)
		}
		ids[i] = id
		gets = append(gets, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)})
	}
	rel := make(map[weibo.UserID]int, len(rows)+len(largeIDs))
	attends := func(a weibo.UserID) {
		if _, seen := rel[a]; !seen && a != uid {
			rel[a] = len(gets)
			gets = append(gets, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(uid, tables.Attends, a)})
		}
	}
	for _, id := range ids {
		attends(id.Author)
	}
	for _, a := range largeIDs {
		attends(a)
	}
	setAt := -1
	if large != nil {
		setAt = len(gets)
		gets = append(gets, safety.VersionGet(uid))
	}
	rs, err := h.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	if setAt >= 0 && rs[setAt].Exists() {
		return nil, errUnsupported
	}
	for _, a := range largeIDs {
		if rs[rel[a]].Exists() {
			return nil, errUnsupported
		}
	}
	out := make([]entry, 0, len(rows))
	for i, id := range ids {
		text := rs[i].Value(tables.FamPost, tables.ColText)
		if text == nil {
			continue
		}
		if j, ok := rel[id.Author]; ok && !rs[j].Exists() {
			continue
		}
		out = append(out, entry{key: rows[i].Row, id: id, text: text, name: rs[i].Value(tables.FamPost, tables.ColAuthorName)})
	}
	return out, nil
}

// writePage writes the page as the gateway answers home.js's query, with
// the query-cost extension the gateway adds under its default limits
// (homeTimeline and pageInfo, then a node and an author per edge).
func writePage(buf *bytes.Buffer, prefix []byte, es []entry, more bool, first int) {
	var cursor []byte
	appendCursor := func(key []byte) {
		cursor = paging.AppendCursor(cursor[:0], paging.CursorTimeline, key[len(prefix):])
	}
	buf.WriteString(`{"data":{"homeTimeline":{"edges":[`)
	for i, e := range es {
		if i > 0 {
			buf.WriteByte(',')
		}
		appendCursor(e.key)
		buf.WriteString(`{"cursor":"`)
		buf.Write(cursor)
		buf.WriteString(`","node":{"id":"`)
		buf.WriteString(e.id.String())
		buf.WriteString(`","content":`)
		gqlstring.WriteQuoted(buf, string(e.text))
		buf.WriteString(`,"createdAt":"`)
		buf.Write(time.UnixMilli(e.id.Millis).UTC().AppendFormat(buf.AvailableBuffer(), time.RFC3339Nano))
		buf.WriteString(`","author":{"id":"`)
		buf.WriteString(e.id.Author.String())
		buf.WriteString(`","username":`)
		gqlstring.WriteQuoted(buf, string(e.name))
		buf.WriteString(`}}}`)
	}
	buf.WriteString(`],"pageInfo":{"hasNextPage":`)
	buf.WriteString(strconv.FormatBool(more))
	buf.WriteString(`,"endCursor":`)
	if len(es) == 0 {
		buf.WriteString(`null`)
	} else {
		appendCursor(es[len(es)-1].key)
		buf.WriteByte('"')
		buf.Write(cursor)
		buf.WriteByte('"')
	}
	fmt.Fprintf(buf, `}}},"extensions":{"cost":{"nodes":%d,"maxNodes":50000,"depth":5,"maxDepth":15}}}`, 2+2*first)
}
