package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"engram/ingest"
)

// Span names of a rebuild (engram reindex): one trace a run, a span per
// batch of objects with its reads, its one index write and its publish
// under it (docs/tracing.md). A batch, not an event: a batch is one index
// write, which each of its events' spans would otherwise claim.
const (
	reindexSpan      = "experience.reindex"
	reindexBatchSpan = "experience.reindex.batch"
	archiveGetSpan   = "experience.objectstore.get"
)

// ReindexTrace is the trace of one rebuild. A nil *ReindexTrace (tracing
// off, or the run not sampled) does nothing.
type ReindexTrace struct {
	t         *Telemetry
	sc        trace.SpanContext
	start     time.Time
	from, to  string
	indexName string
	batches   int
}

// StartReindex starts the trace of a rebuild of the keys from from to to
// into the index named indexName. The run's span is exported at End; each
// batch's spans when the batch is done.
func (t *Telemetry) StartReindex(from, to, indexName string) *ReindexTrace {
	if t == nil {
		return nil
	}
	tid := newTraceID()
	res := t.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: context.Background(), TraceID: tid, Name: reindexSpan, Kind: trace.SpanKindInternal,
	})
	if res.Decision != sdktrace.RecordAndSample {
		return nil
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: newSpanID(), TraceFlags: trace.FlagsSampled, TraceState: res.Tracestate,
	})
	return &ReindexTrace{t: t, sc: sc, start: time.Now(), from: from, to: to, indexName: indexName}
}

// TraceID is the run's trace id ("" when nil), for the run's report.
func (rt *ReindexTrace) TraceID() string {
	if rt == nil {
		return ""
	}
	return rt.sc.TraceID().String()
}

// Batch exports the spans of one finished batch (ReindexConfig.OnBatch).
func (rt *ReindexTrace) Batch(b ingest.ReindexBatch) {
	if rt == nil {
		return
	}
	t := rt.t
	rt.batches++
	end := b.Start.Add(b.Read)
	if !b.WriteAt.IsZero() {
		end = b.WriteAt.Add(b.Write)
	}
	if !b.AnnounceAt.IsZero() {
		end = b.AnnounceAt.Add(b.Announce)
	}
	e := &eventSpans{info: &t.info, kind: trace.SpanKindInternal, parent: rt.sc,
		root: rt.sc.WithSpanID(newSpanID())}
	e.spans[0] = span{ev: e, name: reindexBatchSpan, start: b.Start, end: end, attrs: []attribute.KeyValue{
		attribute.Int("cog.reindex.objects", b.Objects), attribute.Int("cog.reindex.created", b.Created),
		attribute.Int("cog.reindex.existing", b.Existing), attribute.Int("cog.reindex.bad", b.Bad),
		attribute.Int("cog.reindex.failed", b.Failed),
		attribute.String("cog.reindex.first_key", b.FirstKey), attribute.String("cog.reindex.last_key", b.LastKey),
	}}
	if b.Err != nil {
		e.spans[0].status = sdktrace.Status{Code: codes.Error, Description: t.redact(b.Err.Error())}
	}
	n := 1
	child := func(name string, at time.Time, d time.Duration, attrs ...attribute.KeyValue) {
		e.spans[n] = span{ev: e, id: newSpanID(), name: name, start: at, end: at.Add(d), attrs: attrs}
		n++
	}
	child(archiveGetSpan, b.Start, b.Read, t.archive, attribute.Int("cog.reindex.objects", b.Objects))
	if !b.WriteAt.IsZero() {
		child(stageSpan[ingest.StageIndex], b.WriteAt, b.Write, t.index, t.db,
			attribute.String("cog.memory.index", rt.indexName), attribute.Int("cog.reindex.documents", b.Created+b.Existing+b.Failed))
		if b.Failed > 0 {
			e.spans[n-1].status = e.spans[0].status
		}
	}
	if !b.AnnounceAt.IsZero() {
		child(stageSpan[ingest.StagePublish], b.AnnounceAt, b.Announce)
	}
	e.spans[0].childSpans = n - 1
	t.queue(e.spans[:n])
}

// End exports the run's span, with its counts and, when it failed or left
// objects unindexed, status error.
func (rt *ReindexTrace) End(sum ingest.ReindexSummary, err error) {
	if rt == nil {
		return
	}
	t := rt.t
	e := &eventSpans{info: &t.info, kind: trace.SpanKindInternal, root: rt.sc}
	root := &e.spans[0]
	*root = span{ev: e, name: reindexSpan, start: rt.start, end: time.Now(), childSpans: rt.batches, attrs: []attribute.KeyValue{
		attribute.String("cog.reindex.from", rt.from), attribute.String("cog.reindex.to", rt.to),
		attribute.String("cog.memory.index", rt.indexName), t.index,
		attribute.Int("cog.reindex.objects", sum.Objects), attribute.Int("cog.reindex.created", sum.Created),
		attribute.Int("cog.reindex.existing", sum.Existing), attribute.Int("cog.reindex.bad", sum.Bad),
		attribute.Int("cog.reindex.failed", sum.Failed),
	}}
	switch {
	case err != nil:
		root.status = sdktrace.Status{Code: codes.Error, Description: t.redact(err.Error())}
	case sum.Bad+sum.Failed > 0:
		root.status = sdktrace.Status{Code: codes.Error, Description: "objects not indexed"}
	}
	t.queue(e.spans[:1])
}
