package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config is what the standard OTEL_* variables say, already resolved by
// the caller (engram's settings table reads them, with profiles and flags
// over them). The zero Config is off.
type Config struct {
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, to which the
	// HTTP exporter appends /v1/traces. TracesEndpoint is
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as it is, and wins. With
	// neither, nothing is set up.
	Endpoint, TracesEndpoint string
	Protocol                 string // "http/protobuf" (default) or "grpc"
	Headers                  string // "k=v,k2=v2", values percent-encoded (a secret)
	ServiceName              string // default "engram"
	ResourceAttributes       string // "k=v,k2=v2"
	Sampler, SamplerArg      string // OTEL_TRACES_SAMPLER and its _ARG (default parentbased_always_on)
	Disabled                 bool   // OTEL_SDK_DISABLED

	// ArchiveBackend and IndexBackend name the stores in the spans'
	// cog.objectstore.backend and cog.index.backend ("dir" or "s3",
	// "sqlite" or "opensearch"): the span names stay the source system's
	// whatever engram writes to.
	ArchiveBackend, IndexBackend string

	// StageSpans says which stages are child spans of experience.ingest:
	// "all" (the default: every stage that ran), or "main", only the
	// source system's three (embed, objectstore.put, opensearch.index),
	// engram's own stages (validate, score, key, publish) being attributes
	// of the root (cog.stage.NAME.duration_us): half the spans, for a
	// collector that shares engram's machine.
	StageSpans string

	// Redact scrubs secrets out of error messages put on spans (optional).
	Redact func(string) string

	// ExportTimeout bounds one export request (default 10s, the OTLP
	// default). QueueSize is how many events' spans wait for export before
	// new ones are dropped (default 8192: a second of the embedded
	// pipeline's fastest rate; the batch processor queues an event's spans
	// as one item).
	ExportTimeout time.Duration
	QueueSize     int

	// Exporter, when set, replaces the OTLP exporter (tests): it is used
	// even without an endpoint.
	Exporter sdktrace.SpanExporter
}

// Enabled reports whether c asks for spans to be exported.
func (c Config) Enabled() bool {
	return !c.Disabled && (c.Endpoint != "" || c.TracesEndpoint != "" || c.Exporter != nil)
}

// URL is where spans go, for people and messages.
func (c Config) URL() string {
	if c.Exporter != nil {
		return "(test exporter)"
	}
	u, err := c.exportURL()
	if err != nil {
		return c.TracesEndpoint + c.Endpoint
	}
	return u.Redacted()
}

// exportURL is the traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
// given, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces for HTTP. A bare
// host:port (common for gRPC) is taken as http://host:port.
func (c Config) exportURL() (*url.URL, error) {
	raw, signal := c.TracesEndpoint, true
	if raw == "" {
		raw, signal = c.Endpoint, false
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("OTLP endpoint %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: no host", raw)
	}
	if !signal && c.protocol() == "http/protobuf" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u, nil
}

func (c Config) protocol() string {
	if c.Protocol == "" {
		return "http/protobuf"
	}
	return c.Protocol
}

// client makes the OTLP client that sends the spans. Its retries are off:
// a batch that cannot be sent is dropped and counted, rather than held
// (memory) and retried for up to a minute, which would also hold the
// process at exit.
func (c Config) client() (otlptrace.Client, error) {
	u, err := c.exportURL()
	if err != nil {
		return nil, err
	}
	headers, err := parseList(c.Headers, "OTEL_EXPORTER_OTLP_HEADERS")
	if err != nil {
		return nil, err
	}
	timeout := c.exportTimeout()
	switch c.protocol() {
	case "http/protobuf":
		opts := []otlptracehttp.Option{
			otlptracehttp.WithEndpointURL(u.String()),
			otlptracehttp.WithTimeout(timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		}
		if len(headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(headers))
		}
		return otlptracehttp.NewClient(opts...), nil
	case "grpc":
		opts := []otlptracegrpc.Option{
			otlptracegrpc.WithEndpointURL(u.String()),
			otlptracegrpc.WithTimeout(timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}),
		}
		if len(headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(headers))
		}
		return otlptracegrpc.NewClient(opts...), nil
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: engram exports http/protobuf or grpc", c.Protocol)
	}
}

// mainOnly reads StageSpans.
func (c Config) mainOnly() (bool, error) {
	switch c.StageSpans {
	case "", "all":
		return false, nil
	case "main":
		return true, nil
	}
	return false, fmt.Errorf("otel.stage_spans %q: want all or main", c.StageSpans)
}

func (c Config) exportTimeout() time.Duration {
	if c.ExportTimeout <= 0 {
		return 10 * time.Second
	}
	return c.ExportTimeout
}

// exportBatch is the most events one export request carries the spans of:
// the fewer the requests, the less the exporter costs per span; 256
// events are 2048 spans, about 700 KB of OTLP, below every collector's
// default request limit (4 MiB).
const exportBatch = 256

// batchOptions tune the SDK's batch span processor: never blocking (a
// full queue drops spans, counted), big batches, and an export bounded
// like the request itself.
func (c Config) batchOptions() []sdktrace.BatchSpanProcessorOption {
	// engram's defaults stand in for the SDK's where no OTEL_BSP_*
	// variable is set (the SDK reads those itself).
	var opts []sdktrace.BatchSpanProcessorOption
	queue := c.QueueSize
	if queue <= 0 && os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" {
		queue = 8192
	}
	if queue > 0 {
		opts = append(opts, sdktrace.WithMaxQueueSize(queue))
	}
	if os.Getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == "" {
		batch := exportBatch
		if queue > 0 {
			batch = min(batch, queue)
		}
		opts = append(opts, sdktrace.WithMaxExportBatchSize(batch))
	}
	if os.Getenv("OTEL_BSP_EXPORT_TIMEOUT") == "" {
		opts = append(opts, sdktrace.WithExportTimeout(c.exportTimeout()))
	}
	return opts
}

// resource is the service's identity: service.name, the resource
// attributes given, and the SDK's own attributes. The environment is not
// read here: the caller's settings already did, with profiles beside it.
func (c Config) resource() (*resource.Resource, error) {
	kv, err := parseList(c.ResourceAttributes, "OTEL_RESOURCE_ATTRIBUTES")
	if err != nil {
		return nil, err
	}
	attrs := make([]attribute.KeyValue, 0, len(kv)+1)
	for k, v := range kv {
		if k != "service.name" {
			attrs = append(attrs, attribute.String(k, v))
		}
	}
	name := c.ServiceName
	if name == "" {
		name = kv["service.name"]
	}
	if name == "" {
		name = "engram"
	}
	attrs = append(attrs, attribute.String("service.name", name))
	return resource.New(context.Background(), resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
}

// sampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG the way the
// specification spells them.
func (c Config) sampler() (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if c.SamplerArg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(c.SamplerArg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: want a ratio in [0, 1]", c.SamplerArg)
		}
		return f, nil
	}
	switch c.Sampler {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio", "parentbased_traceidratio":
		f, err := ratio()
		if err != nil {
			return nil, err
		}
		if c.Sampler == "traceidratio" {
			return sdktrace.TraceIDRatioBased(f), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(f)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER %q: want always_on, always_off, traceidratio or their parentbased_ forms", c.Sampler)
}

// parseList reads the "k=v,k2=v2" lists of OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES (values percent-decoded). The error names the
// variable, never a value: header values are credentials.
func parseList(s, name string) (map[string]string, error) {
	out := map[string]string{}
	for i, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: item %d is not key=value", name, i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, errors.New(name + ": a value is not valid percent-encoding")
		}
		out[k] = dv
	}
	return out, nil
}
