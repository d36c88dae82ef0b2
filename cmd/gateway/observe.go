package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/weibohbase/gateway/server"
)

// Log formats of --log-format.
const (
	logText = "text"
	logJSON = "json"
)

// takeLogFormat takes --log-format (or -log-format, with its value after
// "=" or as the next argument) out of args, which every command accepts,
// and returns its value (def when absent) and the other arguments.
func takeLogFormat(def string, args []string) (format string, rest []string, err error) {
	format = def
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "log-format" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			value = args[i]
		}
		format = value
	}
	if format != logText && format != logJSON {
		return "", nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return format, rest, nil
}

// newLogger returns the logger of the gateway: slog's text or JSON
// handler on w at level, with each line of a request carrying its
// request_id and GraphQL operation (server.LogHandler).
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == logJSON {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(server.LogHandler(h))
}

// serviceName is the OpenTelemetry service.name of the gateway's spans
// unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says another.
const serviceName = "weibo-gateway"

// tracingEnabled reports whether spans are exported: when endpoint (the
// --otlp-endpoint flag) is set, or the standard OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none.
func tracingEnabled(endpoint string) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTracing returns the tracer provider that exports the gateway's
// spans over OTLP/HTTP (protobuf), in batches, and makes it (with W3C
// trace-context propagation) the global one; nil when tracing is off
// (tracingEnabled). endpoint, when set, is the collector's base URL
// (http://collector:4318; /v1/traces is added when it has no path) and wins
// over the environment; the exporter, sampler and resource otherwise follow
// the standard OTEL_* variables. The caller shuts the provider down, which
// flushes the spans not sent yet.
func startTracing(ctx context.Context, endpoint string) (*sdktrace.TracerProvider, error) {
	if !tracingEnabled(endpoint) {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("--otlp-endpoint %q: want a URL such as http://localhost:4318", endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp, nil
}

// tracerProvider returns tp as a trace.TracerProvider: nil (the global
// provider) when tracing is off.
func tracerProvider(tp *sdktrace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return nil
	}
	return tp
}
