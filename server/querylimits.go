package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/querycost"
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/safety"
)

// QueryLimits bound what one GraphQL operation may ask for; each is
// checked before validation and execution, in milliseconds (package
// querycost). Zero means the default; a negative value turns a limit off.
type QueryLimits struct {
	// MaxNodes bounds the objects the operation can return, every
	// connection's `first` multiplying what is under it (default
	// DefaultMaxQueryNodes; QUERY_TOO_COMPLEX).
	MaxNodes int64
	// MaxDepth bounds the nesting of fields (default DefaultMaxQueryDepth;
	// QUERY_TOO_DEEP).
	MaxDepth int
	// MaxTokens bounds the lexical tokens of the document (default
	// DefaultMaxQueryTokens; QUERY_TOO_COMPLEX).
	MaxTokens int
	// MaxFields bounds the field selections once fragments are expanded
	// (default DefaultMaxQueryFields; QUERY_TOO_COMPLEX).
	MaxFields int64
	// MaxAliases bounds the aliased field selections, expanded likewise
	// (default DefaultMaxQueryAliases; QUERY_TOO_COMPLEX).
	MaxAliases int64
	// MaxOverlap bounds the work of validation's overlapping-fields check,
	// which grows with the square of how often fields are repeated
	// (querycost.Cost.Overlap; default DefaultMaxQueryOverlap, which keeps
	// validation short; QUERY_TOO_COMPLEX).
	MaxOverlap int64
}

// Defaults of QueryLimits, sized for the project's 2-core machine (see
// README "Limits" and docs/benchmarks.md).
const (
	DefaultMaxQueryNodes   = 50_000
	DefaultMaxQueryDepth   = 15
	DefaultMaxQueryTokens  = 10_000
	DefaultMaxQueryFields  = 2_000
	DefaultMaxQueryAliases = 200
	DefaultMaxQueryOverlap = 50_000
)

func (l QueryLimits) withDefaults() QueryLimits {
	l.MaxNodes = orDefault(l.MaxNodes, DefaultMaxQueryNodes)
	l.MaxDepth = orDefault(l.MaxDepth, DefaultMaxQueryDepth)
	l.MaxTokens = orDefault(l.MaxTokens, DefaultMaxQueryTokens)
	l.MaxFields = orDefault(l.MaxFields, DefaultMaxQueryFields)
	l.MaxAliases = orDefault(l.MaxAliases, DefaultMaxQueryAliases)
	l.MaxOverlap = orDefault(l.MaxOverlap, DefaultMaxQueryOverlap)
	return l
}

// orDefault maps 0 to def; a negative value (no limit) stays, so that
// applying defaults twice changes nothing.
func orDefault[T ~int | ~int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// limit returns v as a limit for code where 0 means none.
func limit[T ~int | ~int64](v T) T { return max(v, 0) }

// costExtension is the stats key of an operation's measured cost.
const costExtension = "gateway.cost"

// CostReport is extensions.cost of every response to an accepted
// operation: what the operation was measured at before it ran, its limits,
// and the client's budget (omitted when throttling is off).
type CostReport struct {
	// Nodes is the most objects the operation can return.
	Nodes int64 `json:"nodes"`
	// MaxNodes is the node limit (0: none).
	MaxNodes int64 `json:"maxNodes"`
	// Depth is the operation's field nesting.
	Depth int `json:"depth"`
	// MaxDepth is the depth limit (0: none).
	MaxDepth int `json:"maxDepth"`
	// Budget is the client's budget after this operation.
	Budget *BudgetReport `json:"budget,omitempty"`
}

// BudgetReport is the client's query budget.
type BudgetReport struct {
	// Remaining is how many nodes the client may still ask for now.
	Remaining int64 `json:"remaining"`
	// PerMinute is how many nodes the budget regains a minute, and holds at most.
	PerMinute int64 `json:"perMinute"`
}

// queryLimits is the gqlgen extension that measures every operation before
// gqlgen parses and validates it (an OperationParameterMutator: it runs
// first, on the raw query), refuses what is over a limit or over the
// client's budget, and reports the cost of what it lets through.
type queryLimits struct {
	limits        QueryLimits
	introspection bool
	budget        *budget // nil: off
	// lanes schedules heavy and light operations.
	lanes  *lanes
	now    func() time.Time
	schema *ast.Schema
	sizes  querycost.Sizes
	// docs is gqlgen's cache of parsed and validated documents (nil: none).
	// A query found there passed the token limit when it was first parsed
	// here (the limit is the process's), and a cached document is only read
	// (by querycost and by every executor of it), so its cost is measured
	// from it without parsing the query again.
	docs graphql.Cache[*ast.QueryDocument]
}

var (
	_ graphql.HandlerExtension          = (*queryLimits)(nil)
	_ graphql.OperationParameterMutator = (*queryLimits)(nil)
	_ graphql.ResponseInterceptor       = (*queryLimits)(nil)
)

// ExtensionName implements graphql.HandlerExtension.
func (q *queryLimits) ExtensionName() string { return "QueryLimits" }

// Validate implements graphql.HandlerExtension: it learns the schema and
// the sizes of its lists.
func (q *queryLimits) Validate(es graphql.ExecutableSchema) error {
	q.schema = es.Schema()
	lists := querycost.IntrospectionSizes(q.schema)
	// Unpaged lists of the schema: a department's ancestors are at most
	// its depth; a user's roles are not bounded by the domain and count
	// as a default page.
	lists["Department.ancestors"] = org.MaxDepartmentDepth
	// nodes(ids:) returns one entry per id, at most MaxNodes.
	lists["Query.nodes"] = resolvers.MaxNodes
	// A post's topics are not bounded by the topic rule (a post of 10,000
	// characters could hold thousands); real posts hold a few, and each
	// costs one cell of a batched read: counted as a default page.
	// topics(prefix:), topTopics and trendingTopics count their own first.
	lists["Post.topics"] = weibo.DefaultPageSize
	// A text mentions at most feed.MaxMentions users. (Notification.actors
	// and Query.notifications are connections: their `first` counts.)
	lists["Post.mentions"] = feed.MaxMentions
	lists["Comment.mentions"] = feed.MaxMentions
	// A viewer has at most safety.MaxFilters filters, and a post matches
	// at most that many. (blockedUsers and mutedUsers are connections.)
	lists["Query.filters"] = safety.MaxFilters
	lists["Post.filtered"] = safety.MaxFilters
	// A report names at most report.MaxItems posts and comments in all.
	// (reports and myReports are connections: their `first` counts.)
	lists["Report.posts"] = report.MaxItems
	lists["Report.comments"] = report.MaxItems
	// A post carries at most resolvers.MaxPostMedia pictures.
	lists["Post.media"] = resolvers.MaxPostMedia
	// An upload decodes and resizes a picture: it counts as a heavy
	// operation of its own (HeavyQueryNodes or more).
	weights := map[string]int64{"Mutation.uploadMedia": resolvers.UploadNodes}
	q.sizes = querycost.Sizes{DefaultFirst: weibo.DefaultPageSize, MaxFirst: weibo.MaxPageSize, Lists: lists, DefaultList: weibo.DefaultPageSize,
		Weights: weights}
	return nil
}

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (q *queryLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil // a persisted-query hash gqlgen does not know: it answers
	}
	doc, err := q.parse(ctx, p.Query)
	if err != nil {
		var gerr *gqlerror.Error
		if !errors.As(err, &gerr) {
			gerr = gqlerror.Wrap(err)
		}
		if q.limits.MaxTokens > 0 && strings.HasPrefix(gerr.Message, "exceeded token limit") {
			return tooBig(&querycost.Exceeded{Measure: "tokens", Value: int64(q.limits.MaxTokens) + 1, Max: int64(q.limits.MaxTokens)})
		}
		errcode.Set(gerr, errcode.ParseFailed)
		return gerr
	}
	lim := querycost.Limits{MaxNodes: limit(q.limits.MaxNodes), MaxDepth: limit(q.limits.MaxDepth), MaxFields: limit(q.limits.MaxFields),
		MaxAliases: limit(q.limits.MaxAliases), MaxOverlap: limit(q.limits.MaxOverlap)}
	c, err := querycost.Measure(q.schema, doc, p.OperationName, p.Variables, q.sizes, lim)
	if err != nil {
		var ex *querycost.Exceeded
		if errors.As(err, &ex) {
			return tooBig(ex)
		}
		return gqlerror.Wrap(err)
	}
	if c.Introspection && !q.introspection {
		return &gqlerror.Error{Message: "introspection is disabled on this server",
			Extensions: map[string]any{"code": CodeValidationFailed, "reason": "INTROSPECTION_DISABLED"}}
	}
	report := &CostReport{Nodes: c.Nodes, MaxNodes: lim.MaxNodes, Depth: c.Depth, MaxDepth: lim.MaxDepth}
	if q.budget != nil {
		wait, left := q.budget.take(clientKey(ctx), c.Nodes, q.now())
		if wait > 0 {
			stateOf(ctx).retryAfter(wait)
			return rateLimited(wait, "this client's query budget is spent: "+strconv.FormatInt(q.budget.perMinute, 10)+
				" nodes a minute; this query needs "+strconv.FormatInt(max(c.Nodes, 1), 10), map[string]any{
				"cost": c.Nodes, "budget": BudgetReport{Remaining: left, PerMinute: q.budget.perMinute}})
		}
		report.Budget = &BudgetReport{Remaining: left, PerMinute: q.budget.perMinute}
	}
	graphql.GetOperationContext(ctx).Stats.SetExtension(costExtension, report)
	return nil
}

// parse returns the document of query: gqlgen's cached one, or parsed
// with the token limit.
func (q *queryLimits) parse(ctx context.Context, query string) (*ast.QueryDocument, error) {
	if q.docs != nil {
		if doc, ok := q.docs.Get(ctx, query); ok {
			return doc, nil
		}
	}
	return parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, limit(q.limits.MaxTokens))
}

// HeavyQueryNodes is the cost from which an operation is heavy: heavy
// operations execute at most Config.HeavyQueries at a time (the others wait
// for a slot within the request's deadline) and give way to light ones
// (lanes), so that heavy clients cannot take the cores from light ones.
const HeavyQueryNodes = 1_000

// InterceptResponse implements graphql.ResponseInterceptor: it adds
// extensions.cost to the responses of accepted operations, and executes
// them in their lane.
func (q *queryLimits) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	r, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(costExtension).(*CostReport)
	if !ok {
		return next(ctx)
	}
	graphql.RegisterExtension(ctx, "cost", r)
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Subscription {
		// Each call waits for the subscription's next event: no lane.
		return next(ctx)
	}
	if r.Nodes < HeavyQueryNodes {
		q.lanes.enterLight()
		defer q.lanes.leaveLight()
		return next(ctx)
	}
	if err := q.lanes.enterHeavy(ctx); err != nil {
		graphql.AddError(ctx, gqlerror.Wrap(err))
		return &graphql.Response{Errors: graphql.GetErrors(ctx), Extensions: graphql.GetExtensions(ctx)}
	}
	defer q.lanes.leaveHeavy()
	return next(context.WithValue(ctx, heavyKey{}, true))
}

// tooBig is the error of an operation over a limit: QUERY_TOO_DEEP for
// depth, QUERY_TOO_COMPLEX for the rest, with the measure, its value
// ("cost") and the limit in extensions.
func tooBig(ex *querycost.Exceeded) *gqlerror.Error {
	code, msg := CodeQueryTooComplex, ex.Error()
	switch ex.Measure {
	case querycost.MeasureDepth:
		code = CodeQueryTooDeep
	case "tokens":
		msg = "the query has more than " + strconv.FormatInt(ex.Max, 10) + " tokens"
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{
		"code": code, "measure": ex.Measure, "cost": ex.Value, "limit": ex.Max}}
}

// rateLimited is a RATE_LIMITED error asking to retry after wait.
func rateLimited(wait time.Duration, msg string, ext map[string]any) *gqlerror.Error {
	if ext == nil {
		ext = map[string]any{}
	}
	ext["code"] = CodeRateLimited
	ext["retryAfter"] = int64((wait + time.Second - 1) / time.Second)
	return &gqlerror.Error{Message: msg, Extensions: ext}
}

// clientKey names the client whose budget a request spends: its token's
// user, else its address.
func clientKey(ctx context.Context) string {
	if uid, ok := auth.OptionalViewer(ctx); ok {
		return "user:" + uid.String()
	}
	return "addr:" + clientAddr(ctx)
}
