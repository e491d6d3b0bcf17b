package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// newTracerProvider exports spans over OTLP/HTTP when an endpoint is configured (--otlp-endpoint, or the
// standard OTEL_EXPORTER_OTLP_ENDPOINT the exporter reads itself); otherwise tracing is a no-op.
func newTracerProvider(ctx context.Context, c config, env func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if c.otlpEndpoint == "" && env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if c.otlpEndpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(c.otlpEndpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("memnode"),
		semconv.ServiceInstanceID(c.nodeID))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
