package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo/documents"
	"github.com/weibohbase/gateway/weibo/org"
)

// DocumentsMode says which operations the gateway runs: any (open) or,
// for requests of tokens without RUN_ANY_OPERATION, only registered
// documents (allowlist).
type DocumentsMode string

// The documents modes (--documents, GATEWAY_DOCUMENTS).
const (
	// DocumentsOpen runs any operation, full text or a registered
	// document's id, and registers automatic persisted queries for anyone.
	DocumentsOpen DocumentsMode = "open"
	// DocumentsAllowlist runs any text (and registers automatic persisted
	// queries) only for viewers holding RUN_ANY_OPERATION; every other
	// request must name a registered document (documentId, or Apollo's
	// extensions.persistedQuery.sha256Hash without query) or send its
	// exact text, else it gets PERSISTED_DOCUMENT_REQUIRED (HTTP 400) and
	// nothing runs.
	DocumentsAllowlist DocumentsMode = "allowlist"
)

// ParseDocumentsMode returns the mode named s ("open", "allowlist"; ""
// is open), an error naming both for anything else.
func ParseDocumentsMode(s string) (DocumentsMode, error) {
	switch m := DocumentsMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", DocumentsOpen:
		return DocumentsOpen, nil
	case DocumentsAllowlist:
		return m, nil
	}
	return "", fmt.Errorf("documents mode %q: want open or allowlist", s)
}

// Error codes of trusted documents.
const (
	// CodePersistedDocumentRequired: under --documents=allowlist, a
	// request of a viewer without RUN_ANY_OPERATION sent operation text
	// that is no registered document's (or an automatic persisted query
	// to register) instead of a registered document's id. HTTP 400;
	// nothing is executed.
	CodePersistedDocumentRequired = "PERSISTED_DOCUMENT_REQUIRED"
	// CodePersistedQueryNotFound: the documentId or persistedQuery hash
	// names no registered document (nor, in open mode, a cached automatic
	// persisted query). The message is Apollo's "PersistedQueryNotFound",
	// which Apollo Client's persisted-queries link reacts to.
	CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
)

// MaxCachedDocuments bounds the registered documents each gateway keeps
// in memory, and MaxCachedDocumentBytes their total text.
const (
	MaxCachedDocuments     = 1000
	MaxCachedDocumentBytes = 4 << 20
)

// ValidateDocument parses text and validates it against the schema the
// gateway serves, with the rules it executes under, and returns the names
// of its operations in document order (none for a single anonymous
// operation). The error lists every parse or validation error, each with
// its line and column.
func ValidateDocument(text string) (names []string, err error) {
	doc, perr := parser.ParseQuery(&ast.Source{Input: text})
	if perr != nil {
		return nil, perr
	}
	if errs := validator.ValidateWithRules(servedSchema(), doc, validationRules()); len(errs) > 0 {
		return nil, errs
	}
	if len(doc.Operations) == 0 {
		return nil, fmt.Errorf("the document defines no operation")
	}
	for _, op := range doc.Operations {
		if op.Name != "" {
			names = append(names, op.Name)
		}
	}
	return names, nil
}

// documentIDExtension is the key of a request's documentId in its
// extensions: the HTTP transport moves the top-level member there
// (setDocumentID), and a WebSocket subscribe may send it there itself.
const documentIDExtension = "documentId"

// setDocumentID puts a request's documentId into p's extensions.
func setDocumentID(p *graphql.RawParams, id string) {
	ext := make(map[string]any, len(p.Extensions)+1)
	for k, v := range p.Extensions {
		ext[k] = v
	}
	ext[documentIDExtension] = id
	p.Extensions = ext
}

// documentStatsKey is the Stats extension that holds the id of the
// registered document an operation ran ("sha256:<hex>").
const documentStatsKey = "gateway.documents.id"

// documentOf returns the id of the registered document opCtx runs, ""
// when it was sent as text.
func documentOf(opCtx *graphql.OperationContext) string {
	id, _ := opCtx.Stats.GetExtension(documentStatsKey).(string)
	return id
}

// trustedDocuments is the gqlgen extension that resolves a request's
// registered document, and under DocumentsAllowlist refuses text from
// viewers without RUN_ANY_OPERATION. It runs before the automatic
// persisted queries (register it first): a persistedQuery hash without
// query is looked up in the store (through a bounded cache: documents
// never change) before APQ's cache, and a documentId only there.
type trustedDocuments struct {
	store *documents.Service
	cache *sizedCache[string]
	mode  DocumentsMode
	// standing returns the viewer's permissions.
	standing func(ctx context.Context) (org.Standing, error)
}

// newTrustedDocuments returns the extension over cfg's store.
func newTrustedDocuments(cfg Config) trustedDocuments {
	mode := cfg.Documents
	if mode == "" {
		mode = DocumentsOpen
	}
	return trustedDocuments{
		store: documents.New(cfg.Svc.Store(), cfg.Now),
		cache: newSizedCache(MaxCachedDocuments, MaxCachedDocumentBytes, MaxCachedDocumentBytes, func(k, v string) int { return len(k) + len(v) }),
		mode:  mode,
		standing: func(ctx context.Context) (org.Standing, error) {
			viewer, _ := auth.OptionalViewer(ctx)
			return cfg.Svc.Org.Authz.Standing(ctx, viewer)
		},
	}
}

var (
	_ graphql.HandlerExtension          = trustedDocuments{}
	_ graphql.OperationParameterMutator = trustedDocuments{}
)

// ExtensionName implements graphql.HandlerExtension.
func (trustedDocuments) ExtensionName() string { return "TrustedDocuments" }

// Validate implements graphql.HandlerExtension.
func (trustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (d trustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	rawID, hasID := p.Extensions[documentIDExtension]
	id, _ := rawID.(string)
	hash, hasHash := apqHash(p.Extensions)
	switch {
	case hasID && id == "":
		return docError(CodeBadRequest, "documentId must be a string: \"sha256:\" and the 64 hex digits of the document's SHA-256")
	case id != "" && p.Query != "":
		return docError(CodeBadRequest, "send a documentId or a query, not both")
	case id != "":
		if !strings.HasPrefix(id, documents.IDPrefix) {
			return docError(CodeBadRequest, "documentId must be \"sha256:\" and the 64 hex digits of the document's SHA-256")
		}
		return d.resolve(ctx, p, id, false)
	case hasHash && p.Query == "":
		return d.resolve(ctx, p, hash, true)
	}
	// Text, or an automatic persisted query to register.
	anyText, err := d.mayRunText(ctx)
	switch {
	case err != nil:
		return gqlerror.WrapIfUnwrapped(err)
	case anyText:
		return nil
	case hasHash:
		return docError(CodePersistedDocumentRequired, "this gateway runs registered documents only: automatic persisted queries are not registered for this token (it needs the permission RUN_ANY_OPERATION)")
	}
	// The exact text of a registered document is that document (as
	// Apollo Router's safelist takes it): clients that cannot send ids,
	// such as the admin console's sign-in, run once their text is added.
	id = documents.IDOf(p.Query)
	found, gerr := d.lookup(ctx, id)
	if gerr != nil {
		return gerr
	}
	if found != "" {
		graphql.GetOperationContext(ctx).Stats.SetExtension(documentStatsKey, id)
		return nil
	}
	return docError(CodePersistedDocumentRequired, "this gateway runs registered documents only: send a documentId (\"sha256:<hex>\") or extensions.persistedQuery.sha256Hash without query, or use a token with the permission RUN_ANY_OPERATION")
}

// mayRunText reports whether the request may run text and use automatic
// persisted queries: always in open mode; under DocumentsAllowlist when
// its viewer holds RUN_ANY_OPERATION (one read of their standing).
func (d trustedDocuments) mayRunText(ctx context.Context) (bool, error) {
	if d.mode != DocumentsAllowlist {
		return true, nil
	}
	if _, ok := auth.OptionalViewer(ctx); !ok {
		return false, nil
	}
	st, err := d.standing(ctx)
	if err != nil {
		return false, err
	}
	return st.Perms.Has(org.PermRunAnyOperation), nil
}

// resolve sets p's query to the registered document id names. A hash of
// Apollo's (apq) that names no registered document is left to the
// automatic persisted queries when the request may run text
// (mayRunText); otherwise an unknown id is PERSISTED_QUERY_NOT_FOUND.
func (d trustedDocuments) resolve(ctx context.Context, p *graphql.RawParams, id string, apq bool) *gqlerror.Error {
	sum, ok := documents.ParseID(id)
	if !ok {
		return docError(CodeBadRequest, "a document id is \"sha256:\" and the 64 hex digits of the document's SHA-256")
	}
	key := fmt.Sprintf("%x", sum)
	text, gerr := d.lookup(ctx, key)
	if gerr != nil {
		return gerr
	}
	if text == "" {
		if apq {
			anyText, err := d.mayRunText(ctx)
			if err != nil {
				return gqlerror.WrapIfUnwrapped(err)
			}
			if anyText {
				return nil // an automatic persisted query, perhaps
			}
		}
		return docError(CodePersistedQueryNotFound, "PersistedQueryNotFound")
	}
	p.Query = text
	if apq {
		// Served from the store: the automatic persisted queries have
		// nothing to look up or register.
		ext := make(map[string]any, len(p.Extensions))
		for k, v := range p.Extensions {
			if k != "persistedQuery" {
				ext[k] = v
			}
		}
		p.Extensions = ext
	}
	graphql.GetOperationContext(ctx).Stats.SetExtension(documentStatsKey, documents.IDPrefix+key)
	return nil
}

// lookup returns the text of the registered document id names (hex, or
// "sha256:<hex>"), "" when none: from the cache, else one Get, whose hit
// is cached.
func (d trustedDocuments) lookup(ctx context.Context, id string) (string, *gqlerror.Error) {
	key := strings.TrimPrefix(id, documents.IDPrefix)
	if text, ok := d.cache.Get(ctx, key); ok {
		return text, nil
	}
	doc, err := d.store.Get(ctx, key)
	if err != nil {
		return "", gqlerror.WrapIfUnwrapped(err)
	}
	if doc == nil {
		return "", nil
	}
	d.cache.Add(ctx, key, doc.Text)
	return doc.Text, nil
}

// apqHash returns extensions.persistedQuery.sha256Hash when the request
// carries one (version 1, as Apollo sends it).
func apqHash(ext map[string]any) (string, bool) {
	pq, ok := ext["persistedQuery"].(map[string]any)
	if !ok {
		return "", false
	}
	h, ok := pq["sha256Hash"].(string)
	return h, ok && h != ""
}

// docError is a refusal of code with message.
func docError(code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": code}}
}
