package telemetry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"engram/ingest"
)

// scopeName is the instrumentation scope of engram's spans.
const scopeName = "engram/ingest"

// Span names, per stage. The source system's names for embed, archive and
// index, whatever store engram writes to (an attribute says which).
var stageSpan = [ingest.NumStages]string{
	ingest.StageValidate: "experience.validate",
	ingest.StageEmbed:    "experience.embed",
	ingest.StageScore:    "experience.score",
	ingest.StageKey:      "experience.key",
	ingest.StageArchive:  "experience.objectstore.put",
	ingest.StageIndex:    "experience.opensearch.index",
	ingest.StagePublish:  "experience.publish",
}

// RootSpan is the name of an event's root span.
const RootSpan = "experience.ingest"

// Telemetry turns finished traces into spans. A nil *Telemetry is off:
// Observe returns its argument and Shutdown does nothing.
type Telemetry struct {
	cfg      Config
	bsp      sdktrace.SpanProcessor
	sampler  sdktrace.Sampler
	mainOnly bool // Config.StageSpans "main"
	info     spanInfo
	exp      *countingExporter
	spans    atomic.Int64 // sampled spans ended (handed to the exporter's queue)
	shutOnce sync.Once
	stats    Stats
	archive  attribute.KeyValue
	index    attribute.KeyValue
	db       attribute.KeyValue
}

// New sets up export as c says. It returns nil (and no error) when c asks
// for nothing: no endpoint, or OTEL_SDK_DISABLED. No connection is made
// here: a collector that is down costs nothing but the spans.
func New(ctx context.Context, c Config) (*Telemetry, error) {
	if !c.Enabled() {
		return nil, nil
	}
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	sampler, err := c.sampler()
	if err != nil {
		return nil, err
	}
	mainOnly, err := c.mainOnly()
	if err != nil {
		return nil, err
	}
	t := &Telemetry{cfg: c, sampler: sampler, mainOnly: mainOnly, info: spanInfo{res: res, scope: instrumentation.Scope{Name: scopeName}}}
	inner := c.Exporter
	if inner == nil {
		client, err := c.client()
		if err != nil {
			return nil, err
		}
		if inner, err = newOTLPExporter(ctx, client, res, t.info.scope); err != nil {
			return nil, err
		}
	}
	t.exp = &countingExporter{SpanExporter: inner}
	t.bsp = sdktrace.NewBatchSpanProcessor(t.exp, c.batchOptions()...)
	// The SDK reports export problems through the global handler, which
	// logs to stderr by default: in the inspector that would draw over the
	// screen. They are counted instead, and reported once at Shutdown.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(t.exp.fail))
	t.archive = attribute.String("cog.objectstore.backend", orUnknown(c.ArchiveBackend))
	t.index = attribute.String("cog.index.backend", orUnknown(c.IndexBackend))
	t.db = attribute.String("db.system.name", orUnknown(c.IndexBackend))
	return t, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// URL is where spans go (without credentials), "" when off.
func (t *Telemetry) URL() string {
	if t == nil {
		return ""
	}
	return t.cfg.URL()
}

// Stats counts what became of the spans.
type Stats struct {
	Spans    int64 // spans made and sampled
	Exported int64 // spans the collector accepted
	FirstErr error // the first export failure, if any
}

// Lost is how many spans were made but not exported: dropped from a full
// queue, refused, or still unsent when the flush at exit ran out of time.
func (s Stats) Lost() int64 { return max(0, s.Spans-s.Exported) }

// Shutdown flushes the spans still queued and stops export, within ctx
// (give it a deadline: a slow collector is not waited for beyond it). It
// is safe to call more than once and on nil.
func (t *Telemetry) Shutdown(ctx context.Context) Stats {
	if t == nil {
		return Stats{}
	}
	t.shutOnce.Do(func() {
		err := t.bsp.Shutdown(ctx)
		t.stats = Stats{Spans: t.spans.Load(), Exported: t.exp.exported.Load(), FirstErr: t.exp.firstErr()}
		if t.stats.FirstErr == nil && err != nil && t.stats.Lost() > 0 {
			t.stats.FirstErr = err
		}
	})
	return t.stats
}

// Flush exports the spans queued so far, within ctx.
func (t *Telemetry) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.bsp.ForceFlush(ctx)
}

// Observe returns an observer that exports each finished trace as spans
// and passes every call on to next (which may be nil). It keeps next's
// OutageObserver side. On a nil Telemetry it returns next itself.
func (t *Telemetry) Observe(next ingest.Observer) ingest.Observer {
	if t == nil {
		return next
	}
	o := observer{t: t, next: next}
	if oo, ok := next.(ingest.OutageObserver); ok {
		return outageObserver{o, oo}
	}
	return o
}

type observer struct {
	t    *Telemetry
	next ingest.Observer
}

func (o observer) Stage(e ingest.StageEvent) {
	if o.next != nil {
		o.next.Stage(e)
	}
}

func (o observer) Done(tr *ingest.Trace) {
	o.t.Export(tr)
	if o.next != nil {
		o.next.Done(tr)
	}
}

type outageObserver struct {
	observer
	oo ingest.OutageObserver
}

func (o outageObserver) Outage(out ingest.Outage) { o.oo.Outage(out) }
func (o outageObserver) Recovered(s ingest.Stage) { o.oo.Recovered(s) }

// Export makes the spans of one finished trace and queues them for
// export; a full queue drops them (counted in Stats, never waited for). A
// trace that never started (canceled before it was received) has no spans.
func (t *Telemetry) Export(tr *ingest.Trace) {
	if t == nil || !tr.Span.TraceID.IsValid() {
		return
	}
	t.queue(t.build(tr))
}

// queue hands the finished spans of one event (or one reindex batch) to
// the batch processor as one item: the first span stands for them all
// (span.set). One channel send per event rather than per span: each is a
// wake-up of the processor's goroutine.
func (t *Telemetry) queue(spans []span) {
	if len(spans) == 0 {
		return
	}
	spans[0].ev.n = len(spans)
	t.bsp.OnEnd(&spans[0])
	t.spans.Add(int64(len(spans)))
}
func (t *Telemetry) redact(s string) string {
	if t.cfg.Redact != nil {
		return t.cfg.Redact(s)
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// countingExporter counts what the collector accepted and keeps the first
// failure. It swallows export errors (after counting): the batch
// processor would only hand them to the global error handler.
type countingExporter struct {
	sdktrace.SpanExporter
	exported atomic.Int64
	mu       sync.Mutex
	first    error
}

// What the batch processor hands it are span sets (Telemetry.queue):
// engram's exporter takes them as they are, any other one (tests) gets
// every span.
func (e *countingExporter) ExportSpans(ctx context.Context, sets []sdktrace.ReadOnlySpan) error {
	n := 0
	for _, ro := range sets {
		n += len(ro.(*span).set())
	}
	spans := sets
	if _, ours := e.SpanExporter.(*otlpExporter); !ours {
		spans = make([]sdktrace.ReadOnlySpan, 0, n)
		for _, ro := range sets {
			for i := range ro.(*span).set() {
				spans = append(spans, &ro.(*span).set()[i])
			}
		}
	}
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.fail(err)
		return nil
	}
	e.exported.Add(int64(n))
	return nil
}

func (e *countingExporter) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		e.first = err
	}
}

func (e *countingExporter) firstErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.first
}

// Traceparent is the W3C traceparent header of the span in ctx ("" when
// there is none), for messages a producer sends on behalf of that span.
func Traceparent(ctx context.Context) string {
	return SpanTraceparent(trace.SpanContextFromContext(ctx))
}

// SpanTraceparent is the W3C traceparent header of sc ("" when invalid).
func SpanTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// ParentContext is the remote span context of a traceparent (and
// tracestate) header, for consumers that start spans of their own; the
// pipeline takes the header itself, in ingest.Item.Traceparent.
func ParentContext(traceparent, tracestate string) (trace.SpanContext, error) {
	tid, sid, sampled, ok := ingest.ParseTraceparent(traceparent)
	if !ok {
		return trace.SpanContext{}, errors.New("not a W3C traceparent")
	}
	flags := trace.TraceFlags(0)
	if sampled {
		flags = trace.FlagsSampled
	}
	state, _ := trace.ParseTraceState(tracestate)
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID(tid), SpanID: trace.SpanID(sid), TraceFlags: flags, TraceState: state, Remote: true,
	}), nil
}

// FlushTimeout is the bound the commands put on Shutdown at exit, Ctrl-C
// included: spans are worth a short wait, not a hung exit.
const FlushTimeout = 5 * time.Second
