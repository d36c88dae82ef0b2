package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the gateway's GraphQL spans.
const tracerName = "github.com/weibohbase/gateway/server"

// tracer returns the tracer of tp, or of the global provider when tp is nil.
func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(tracerName)
}

// tracing is the gqlgen extension that gives each GraphQL operation an
// OpenTelemetry span (kind server) named "<type> <name>" ("query
// Timeline"; the type alone for an unnamed operation), child of the
// caller's span when the request carries a W3C traceparent header. The
// resolvers, and so the store calls (hbase.Trace), run in its context. It
// ends with the operation's last response (a subscription's: when it
// ends); a response with errors sets its status to Error and lists their
// extensions.code in graphql.error.codes. Attributes: graphql.operation.type,
// graphql.operation.name, gateway.request_id. Never the document, the
// variables or error messages.
type tracing struct {
	tracer trace.Tracer
}

var (
	_ graphql.HandlerExtension     = tracing{}
	_ graphql.OperationInterceptor = tracing{}
)

// ExtensionName implements graphql.HandlerExtension.
func (tracing) ExtensionName() string { return "Tracing" }

// Validate implements graphql.HandlerExtension.
func (tracing) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (t tracing) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	typ, name := string(opCtx.Operation.Operation), opCtx.Operation.Name
	spanName := typ
	if name != "" {
		spanName += " " + name
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && opCtx.Headers != nil {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(http.Header(opCtx.Headers)))
	}
	attrs := []attribute.KeyValue{attribute.String("graphql.operation.type", typ), attribute.String("graphql.operation.name", name)}
	if id := middleware.GetReqID(ctx); id != "" {
		attrs = append(attrs, attribute.String("gateway.request_id", id))
	}
	ctx, span := t.tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	var once sync.Once
	end := func() { once.Do(func() { span.End() }) }
	h := next(ctx)
	return func(rctx context.Context) *graphql.Response {
		resp := h(trace.ContextWithSpan(rctx, span))
		if resp == nil {
			end()
			return nil
		}
		if len(resp.Errors) > 0 {
			codesSeen := make([]string, 0, len(resp.Errors))
			for _, e := range resp.Errors {
				if c, ok := e.Extensions["code"].(string); ok {
					codesSeen = append(codesSeen, c)
				}
			}
			span.SetAttributes(attribute.StringSlice("graphql.error.codes", codesSeen))
			span.SetStatus(codes.Error, "the response has errors")
		}
		if typ != "subscription" && (resp.HasNext == nil || !*resp.HasNext) {
			end()
		}
		return resp
	}
}
