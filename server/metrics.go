package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
)

// GraphQLDuration is the Prometheus histogram
// gateway_graphql_request_duration_seconds{operation_name, operation_type}:
// the seconds from the moment the gateway takes up a GraphQL operation
// (before parsing) until its response is ready. For a query or mutation
// that is its whole execution (with @defer, until the last part); for a
// subscription, until it is set up (its events are not timed). Requests
// that fail before execution (parse and validation errors, refused limits)
// are observed too, with the name and type their document's first
// operation states (operation_type "" when it states none, or when the
// operationName asked for is not in the document). operation_name is
// the operation's name, "" for an unnamed one, and "other" for a name
// longer than 64 bytes or not among the first 200 distinct names this
// process has seen (opNames), so that clients cannot grow the label set.
// It is registered on the default registry when the package loads.
var GraphQLDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "gateway_graphql_request_duration_seconds",
	Help:    "Seconds from taking up a GraphQL operation to its response, by operation name and type (query, mutation, subscription; \"\" when none was chosen).",
	Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
}, []string{"operation_name", "operation_type"})

// GraphQLErrors is the Prometheus counter gateway_graphql_errors_total{code}:
// one increment per error the gateway returns in a GraphQL response (over
// HTTP or WebSocket), by its extensions.code (BAD_USER_INPUT,
// GRAPHQL_VALIDATION_FAILED, UNAUTHENTICATED, UNAVAILABLE, ...; "" for an
// error without one, "other" for a code that is not a short string).
var GraphQLErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_graphql_errors_total",
	Help: "Errors returned in GraphQL responses, by extensions.code.",
}, []string{"code"})

func init() { prometheus.MustRegister(GraphQLDuration, GraphQLErrors) }

// Label limits of the GraphQL metrics.
const (
	// MaxOperationNames is how many distinct operation names get a label
	// value of their own; later names are recorded as "other".
	MaxOperationNames = 200
	// MaxLabelLength bounds an operation name or error code used as a
	// label value, in bytes; longer ones are recorded as "other".
	MaxLabelLength = 64
	// otherLabel stands for every name or code over the limits.
	otherLabel = "other"
)

// opNames hands out operation_name label values: a name of its own for the
// first max distinct valid names, "other" after that. One per process, as
// the metrics are.
type opNames struct {
	mu   sync.Mutex
	seen map[string]struct{}
	max  int
}

var operationNames = &opNames{max: MaxOperationNames}

// label returns the label value of the operation name name.
func (n *opNames) label(name string) string {
	if name == "" {
		return ""
	}
	if !validName(name) {
		return otherLabel
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.seen[name]; ok {
		return name
	}
	if len(n.seen) >= n.max {
		return otherLabel
	}
	if n.seen == nil {
		n.seen = map[string]struct{}{}
	}
	n.seen[name] = struct{}{}
	return name
}

// validName reports whether s is a GraphQL name (/[_A-Za-z][_0-9A-Za-z]*/)
// of at most MaxLabelLength bytes.
func validName(s string) bool {
	if s == "" || len(s) > MaxLabelLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// countErrors adds the errors of a response to gateway_graphql_errors_total.
func countErrors(errs gqlerror.List) {
	for _, e := range errs {
		if e == nil {
			continue
		}
		countErrorCode(e.Extensions["code"])
	}
}

// countErrorCode adds one error of extensions.code code.
func countErrorCode(code any) {
	var label string
	switch c := code.(type) {
	case nil:
	case string:
		label = c
		if !validCode(c) {
			label = otherLabel
		}
	default:
		label = otherLabel
	}
	GraphQLErrors.WithLabelValues(label).Inc()
}

// validCode reports whether s looks like an error code: at most
// MaxLabelLength bytes of [A-Za-z0-9_].
func validCode(s string) bool {
	if len(s) > MaxLabelLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !('0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// operationLabels returns the operation name and type of opCtx (for the
// labels, names.label the name): its chosen operation's, else (the request
// failed before one was chosen) the requested operationName, else the name
// and type its document's first definition states (peekOperation).
func operationLabels(opCtx *graphql.OperationContext) (name, typ string) {
	if opCtx == nil {
		return "", ""
	}
	if op := opCtx.Operation; op != nil {
		return op.Name, string(op.Operation)
	}
	opName, query := opCtx.OperationName, opCtx.RawQuery
	if st, ok := opCtx.Stats.GetExtension(startExtension).(*started); ok && query == "" {
		opName, query = st.params.OperationName, st.params.Query
	}
	if opName != "" {
		return opName, ""
	}
	return peekOperation(query)
}

// peekOperation reads the first tokens of a GraphQL document (which need
// not parse or validate) and returns the operation type and name its first
// definition states: "query" and "" for "{", "" and "" for a fragment or
// anything else. It reads two tokens and the comments before them, at most
// maxPeekTokens for each.
func peekOperation(doc string) (name, typ string) {
	lx := lexer.New(&ast.Source{Input: doc})
	tok, err := nextToken(&lx)
	switch {
	case err != nil:
		return "", ""
	case tok.Kind == lexer.BraceL:
		return "", string(ast.Query)
	case tok.Kind != lexer.Name:
		return "", ""
	}
	switch op := ast.Operation(tok.Value); op {
	case ast.Query, ast.Mutation, ast.Subscription:
		typ = string(op)
	default:
		return "", ""
	}
	if tok, err = nextToken(&lx); err == nil && tok.Kind == lexer.Name {
		name = tok.Value
	}
	return name, typ
}

// observe is the gqlgen extension behind the GraphQL metrics and the
// access log's operation names: for each operation it records its name in
// the request's access log record (accessLog), observes its duration in
// gateway_graphql_request_duration_seconds and counts the errors of its
// responses in gateway_graphql_errors_total; requests that fail before they
// execute (parse and validation errors, refusals of the query limits) go
// through InterceptResponse only and are observed there. Register it first
// (srv.Use), so that it sees what every other extension refuses.
type observe struct {
	names *opNames
}

var (
	_ graphql.HandlerExtension          = observe{}
	_ graphql.OperationParameterMutator = observe{}
	_ graphql.OperationInterceptor      = observe{}
	_ graphql.ResponseInterceptor       = observe{}
)

// startExtension is the Stats extension that keeps an operation's start.
const startExtension = "gateway.observe.start"

// ExtensionName implements graphql.HandlerExtension.
func (observe) ExtensionName() string { return "Observe" }

// Validate implements graphql.HandlerExtension.
func (observe) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator:
// it notes when the operation was taken up (each operation of a batch
// apart).
func (o observe) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	graphql.GetOperationContext(ctx).Stats.SetExtension(startExtension, &started{at: time.Now(), params: p})
	return nil
}

// started is what MutateOperationParameters notes of an operation.
type started struct {
	at     time.Time
	params *graphql.RawParams // the document and operationName as requested, when others refuse them before gqlgen notes them
}

type inOperationKey struct{}

// InterceptOperation implements graphql.OperationInterceptor: it times the
// operation and counts the errors of each of its responses.
func (o observe) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	name, typ := operationLabels(opCtx)
	recordOperation(ctx, name)
	label := o.names.label(name)
	start := operationStart(opCtx)
	var once sync.Once
	done := func() {
		once.Do(func() { GraphQLDuration.WithLabelValues(label, typ).Observe(time.Since(start).Seconds()) })
	}
	h := next(ctx)
	if typ == "subscription" {
		done() // set up; its events are not timed
	}
	return func(ctx context.Context) *graphql.Response {
		resp := h(context.WithValue(ctx, inOperationKey{}, true))
		if resp == nil {
			done()
			return nil
		}
		countErrors(resp.Errors)
		if resp.HasNext == nil || !*resp.HasNext {
			done()
		}
		return resp
	}
}

// InterceptResponse implements graphql.ResponseInterceptor: it observes
// the requests that failed before execution (the responses of executed
// operations are InterceptOperation's).
func (o observe) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if ctx.Value(inOperationKey{}) != nil {
		return next(ctx)
	}
	resp := next(ctx)
	if resp != nil {
		countErrors(resp.Errors)
	}
	if graphql.HasOperationContext(ctx) {
		opCtx := graphql.GetOperationContext(ctx)
		name, typ := operationLabels(opCtx)
		if name == "" || validName(name) {
			recordOperation(ctx, name)
		}
		GraphQLDuration.WithLabelValues(o.names.label(name), typ).Observe(time.Since(operationStart(opCtx)).Seconds())
	}
	return resp
}

// operationStart returns when opCtx's operation was taken up.
func operationStart(opCtx *graphql.OperationContext) time.Time {
	if st, ok := opCtx.Stats.GetExtension(startExtension).(*started); ok {
		return st.at
	}
	if !opCtx.Stats.OperationStart.IsZero() {
		return opCtx.Stats.OperationStart
	}
	return time.Now()
}

// maxPeekTokens bounds the tokens peekOperation reads (comments count).
const maxPeekTokens = 32

// nextToken returns the next token of lx that is not a comment, an error
// after maxPeekTokens comments.
func nextToken(lx *lexer.Lexer) (lexer.Token, error) {
	for range maxPeekTokens {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind != lexer.Comment {
			return tok, err
		}
	}
	return lexer.Token{}, errTooManyComments
}

var errTooManyComments = errors.New("too many comments")
