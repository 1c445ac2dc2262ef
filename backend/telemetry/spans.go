package telemetry

import (
	"context"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"engram/ingest"
)

// An event's spans are made when its trace is done, from the records, and
// handed to the SDK's batch span processor as finished spans: the SDK's
// tracer would start and end a live span per stage (a sampler call, a
// lock, an attribute set and a snapshot each) for spans whose every field
// is already known. The profile of that path put half of the spans' CPU
// there; building them here costs one allocation per event.

// maxAttrs is room enough for the attributes of one event's spans (the
// root's 7, a sampler's, the children's up to 5 each); more would
// allocate, not be dropped.
const maxAttrs = 24

// eventSpans holds one event's finished spans and their attributes, so
// that they are one allocation; what the spans share (the trace, the
// root's context) is kept once, here.
type eventSpans struct {
	info   *spanInfo
	root   trace.SpanContext // the first span's; every other one's parent
	parent trace.SpanContext // the first span's parent (or invalid)
	kind   trace.SpanKind    // the first span's (the others are internal)
	spans  [ingest.NumStages]span
	n      int // spans used, set when queued
	attrs  [maxAttrs]attribute.KeyValue
}

// spanInfo is what every span of a Telemetry shares.
type spanInfo struct {
	res   *resource.Resource
	scope instrumentation.Scope
}

// span is one finished span. The SDK's ReadOnlySpan has an unexported
// method, so that only the SDK makes them; the embedded (nil) interface
// satisfies it, and every exported method is defined below.
type span struct {
	sdktrace.ReadOnlySpan
	ev         *eventSpans
	id         trace.SpanID // zero: the first span, whose context is ev.root
	name       string
	start, end time.Time
	attrs      []attribute.KeyValue
	events     []sdktrace.Event
	status     sdktrace.Status
	childSpans int
}

// set is the span set s stands for in the queue: its event's spans.
func (s *span) set() []span { return s.ev.spans[:s.ev.n] }

func (s *span) SpanContext() trace.SpanContext {
	if !s.id.IsValid() {
		return s.ev.root
	}
	return s.ev.root.WithSpanID(s.id)
}

func (s *span) Parent() trace.SpanContext {
	if !s.id.IsValid() {
		return s.ev.parent
	}
	return s.ev.root
}

func (s *span) SpanKind() trace.SpanKind {
	if !s.id.IsValid() {
		return s.ev.kind
	}
	return trace.SpanKindInternal
}

func (s *span) Name() string                                    { return s.name }
func (s *span) StartTime() time.Time                            { return s.start }
func (s *span) EndTime() time.Time                              { return s.end }
func (s *span) Attributes() []attribute.KeyValue                { return s.attrs }
func (s *span) Links() []sdktrace.Link                          { return nil }
func (s *span) Events() []sdktrace.Event                        { return s.events }
func (s *span) Status() sdktrace.Status                         { return s.status }
func (s *span) InstrumentationScope() instrumentation.Scope     { return s.ev.info.scope }
func (s *span) Resource() *resource.Resource                    { return s.ev.info.res }
func (s *span) DroppedAttributes() int                          { return 0 }
func (s *span) DroppedLinks() int                               { return 0 }
func (s *span) DroppedEvents() int                              { return 0 }
func (s *span) ChildSpanCount() int                             { return s.childSpans }
func (s *span) InstrumentationLibrary() instrumentation.Library { return s.ev.info.scope } //nolint:staticcheck // part of the interface

// rootContext is the root span's context and its parent's, as the sampler
// decides; ok is false when the trace is not sampled (no spans at all).
func (t *Telemetry) rootContext(tr *ingest.Trace, attrs []attribute.KeyValue) (sc, parent trace.SpanContext, extra []attribute.KeyValue, ok bool) {
	tid := trace.TraceID(tr.Span.TraceID)
	ctx := context.Background()
	if tr.Span.Parent.IsValid() {
		flags := trace.TraceFlags(0)
		if tr.Span.Sampled {
			flags = trace.FlagsSampled
		}
		state, _ := trace.ParseTraceState(tr.Span.State)
		parent = trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: trace.SpanID(tr.Span.Parent), TraceFlags: flags, TraceState: state, Remote: true,
		})
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	res := t.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: ctx, TraceID: tid, Name: RootSpan, Kind: trace.SpanKindConsumer, Attributes: attrs,
	})
	// RecordOnly spans would reach no exporter: the batch processor keeps
	// sampled spans only.
	if res.Decision != sdktrace.RecordAndSample {
		return sc, parent, nil, false
	}
	sc = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: trace.SpanID(tr.Span.SpanID), TraceFlags: trace.FlagsSampled, TraceState: res.Tracestate,
	})
	return sc, parent, res.Attributes, true
}

// build makes the spans of one finished trace, nil when the sampler
// drops it. The root comes first.
func (t *Telemetry) build(tr *ingest.Trace) []span {
	e := &eventSpans{info: &t.info, kind: trace.SpanKindConsumer}
	buf, from := e.attrs[:0], 0
	cut := func() []attribute.KeyValue { // the attributes appended since the last cut
		s := buf[from:len(buf):len(buf)]
		from = len(buf)
		return s
	}
	buf = append(buf,
		attribute.String("cog.event.id", tr.EventID),
		attribute.String("cog.event.type", tr.Type),
		attribute.String("cog.session.id", tr.SessionID),
		attribute.String("cog.outcome", tr.Outcome.String()),
		attribute.String("cog.input.source", tr.Src.String()))
	if tr.Stages[ingest.StageScore].Status == ingest.StatusDone {
		buf = append(buf, attribute.Float64("cog.importance.score", tr.Score))
	}
	if tr.IndexName != "" {
		buf = append(buf, attribute.String("cog.memory.index", tr.IndexName))
	}
	if t.mainOnly {
		for i := range tr.Stages {
			if r := &tr.Stages[i]; minorStage[i] && ran(r) {
				buf = append(buf, minorKey[i].Int64(r.Duration.Microseconds()))
			}
		}
	}
	var extra []attribute.KeyValue
	var ok bool
	if e.root, e.parent, extra, ok = t.rootContext(tr, buf); !ok {
		return nil
	}
	buf = append(buf, extra...)
	root := &e.spans[0]
	*root = span{ev: e, name: RootSpan, start: tr.Start, end: tr.Start.Add(tr.Total), attrs: cut()}
	switch tr.Outcome {
	case ingest.OutcomeFailed, ingest.OutcomeRejected, ingest.OutcomeCanceled:
		root.status = sdktrace.Status{Code: codes.Error, Description: t.redact(tr.Outcome.String() + ": " + errString(tr.Err))}
	}
	n := 1
	for i := range tr.Stages {
		r := &tr.Stages[i]
		name := stageSpan[i]
		if name == "" || !ran(r) {
			continue
		}
		if t.mainOnly && minorStage[i] {
			root.events = append(root.events, t.retryEvents(r)...)
			continue
		}
		buf = t.appendStageAttrs(buf, tr, r)
		e.spans[n] = span{ev: e, id: newSpanID(), name: name, start: r.Start, end: r.Start.Add(r.Duration),
			attrs: cut(), events: t.retryEvents(r), status: t.stageStatus(r)}
		n++
	}
	root.childSpans = n - 1
	return e.spans[:n]
}

func ran(r *ingest.StageRecord) bool {
	return r.Status != ingest.StatusPending && r.Status != ingest.StatusSkipped && !r.Start.IsZero()
}

// minorStage marks engram's own stages, those the source system has no
// span for: with Config.StageSpans "main" each is an attribute of the
// root, minorKey, its duration in microseconds (its retries are events of
// the root, its failure the root's error status).
var minorStage = [ingest.NumStages]bool{
	ingest.StageValidate: true, ingest.StageScore: true, ingest.StageKey: true, ingest.StagePublish: true,
}

var minorKey = [ingest.NumStages]attribute.Key{
	ingest.StageValidate: "cog.stage.validate.duration_us", ingest.StageScore: "cog.stage.score.duration_us",
	ingest.StageKey: "cog.stage.key.duration_us", ingest.StagePublish: "cog.stage.publish.duration_us",
}

func (t *Telemetry) appendStageAttrs(a []attribute.KeyValue, tr *ingest.Trace, r *ingest.StageRecord) []attribute.KeyValue {
	switch r.Stage {
	case ingest.StageEmbed:
		a = append(a, attribute.Int("cog.embedding.dim", tr.Dim))
	case ingest.StageArchive:
		a = append(a, t.archive, attribute.String("cog.objectstore.key", tr.Key))
	case ingest.StageIndex:
		a = append(a, t.index, t.db)
		if tr.IndexName != "" {
			a = append(a, attribute.String("cog.memory.index", tr.IndexName))
		}
	}
	if r.Note != "" {
		a = append(a, attribute.String("cog.stage.note", r.Note))
	}
	return a
}

// retryEvents are a stage's retries, as "retry" span events.
func (t *Telemetry) retryEvents(r *ingest.StageRecord) []sdktrace.Event {
	if len(r.Retries) == 0 {
		return nil
	}
	evs := make([]sdktrace.Event, len(r.Retries))
	for i, o := range r.Retries {
		evs[i] = sdktrace.Event{Name: "retry", Time: o.At, Attributes: []attribute.KeyValue{
			attribute.Int("cog.retry.attempt", o.Attempt),
			attribute.String("cog.retry.error", t.redact(errString(o.Err))),
			attribute.Int64("cog.retry.wait_ms", o.Wait.Milliseconds()),
			attribute.String("cog.retry.stage", r.Stage.String()),
		}}
	}
	return evs
}

// newSpanID is a random, valid span id. math/rand/v2's generator is
// per-thread and lock-free; span ids need to be unique, not secret.
func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		v := rand.Uint64()
		for i := range sid {
			sid[i] = byte(v >> (8 * i))
		}
	}
	return sid
}

// newTraceID is a random, valid trace id, for traces engram starts.
func newTraceID() trace.TraceID {
	var tid trace.TraceID
	for !tid.IsValid() {
		a, b := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			tid[i], tid[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
		}
	}
	return tid
}

// stageStatus is a stage span's status: error with the reason when the
// stage failed.
func (t *Telemetry) stageStatus(r *ingest.StageRecord) sdktrace.Status {
	if r.Status == ingest.StatusFailed {
		return sdktrace.Status{Code: codes.Error, Description: t.redact(errString(r.Err))}
	}
	return sdktrace.Status{}
}
