package server

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQLDuration is the Prometheus histogram
// gateway_graphql_request_duration_seconds{operation_name, operation_type}:
// the seconds from the moment the gateway takes up a GraphQL operation
// (before parsing) until its response is ready. For a query or mutation
// that is its whole execution (with @defer, until the last part); for a
// subscription, until it is set up (its events are not timed). Requests
// that fail before an operation is chosen (parse errors, an unknown
// operationName) are observed with operation_type "" . operation_name is
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

// operationLabels returns the operation_name and operation_type labels of
// opCtx: its chosen operation's, else (the request failed before one was
// chosen) the requested operationName's and "".
func operationLabels(names *opNames, opCtx *graphql.OperationContext) (name, typ string) {
	if opCtx == nil {
		return "", ""
	}
	if op := opCtx.Operation; op != nil {
		return names.label(op.Name), string(op.Operation)
	}
	return names.label(opCtx.OperationName), ""
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
func (o observe) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	graphql.GetOperationContext(ctx).Stats.SetExtension(startExtension, time.Now())
	return nil
}

type inOperationKey struct{}

// InterceptOperation implements graphql.OperationInterceptor: it times the
// operation and counts the errors of each of its responses.
func (o observe) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	name, typ := operationLabels(o.names, opCtx)
	recordOperation(ctx, opCtx.Operation.Name)
	start := operationStart(opCtx)
	var once sync.Once
	done := func() {
		once.Do(func() { GraphQLDuration.WithLabelValues(name, typ).Observe(time.Since(start).Seconds()) })
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
		name, typ := operationLabels(o.names, opCtx)
		if opCtx.Operation != nil {
			recordOperation(ctx, opCtx.Operation.Name)
		} else if validName(opCtx.OperationName) {
			recordOperation(ctx, opCtx.OperationName)
		}
		GraphQLDuration.WithLabelValues(name, typ).Observe(time.Since(operationStart(opCtx)).Seconds())
	}
	return resp
}

// operationStart returns when opCtx's operation was taken up.
func operationStart(opCtx *graphql.OperationContext) time.Time {
	if t, ok := opCtx.Stats.GetExtension(startExtension).(time.Time); ok {
		return t
	}
	if !opCtx.Stats.OperationStart.IsZero() {
		return opCtx.Stats.OperationStart
	}
	return time.Now()
}
