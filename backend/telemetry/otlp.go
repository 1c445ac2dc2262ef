package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// otlpExporter sends engram's spans with the SDK's OTLP client but converts
// them itself: they share one resource and scope, so a batch converts into a
// few slabs, where the SDK's conversion span by span was a third of the
// spans' CPU. For downBackoff after a failed request, batches are dropped
// unconverted: the collector is down.
type otlpExporter struct {
	client   otlptrace.Client
	res      *resourcepb.Resource
	schema   string // the resource's schema URL
	scope    *commonpb.InstrumentationScope
	failedAt atomic.Int64 // unix nanoseconds of the last failed request, 0 after a success

	// mu keeps batch, reused from one export to the next: the client has
	// marshalled a request by the time UploadTraces returns. (The batch
	// processor exports one batch at a time already.)
	mu    sync.Mutex
	batch pbBatch
}

const downBackoff = time.Second

var errBackoff = errors.New("traces export: skipped, the collector failed less than a second ago")

func newOTLPExporter(ctx context.Context, client otlptrace.Client, res *resource.Resource, scope instrumentation.Scope) (*otlpExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	var kv pbAttrs
	e := &otlpExporter{client: client, res: &resourcepb.Resource{Attributes: kv.list(res.Attributes())}, schema: res.SchemaURL(),
		scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version}}
	return e, nil
}

// ExportSpans converts and sends one batch of span sets (Telemetry.queue),
// made by this package (spans.go).
func (e *otlpExporter) ExportSpans(ctx context.Context, sets []sdktrace.ReadOnlySpan) error {
	if len(sets) == 0 {
		return nil
	}
	if at := e.failedAt.Load(); at != 0 && time.Since(time.Unix(0, at)) < downBackoff {
		return errBackoff
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ro := range sets {
		s, ok := ro.(*span)
		if !ok {
			return fmt.Errorf("telemetry: a span of type %T reached engram's exporter", ro)
		}
		n += len(s.set())
	}
	b := &e.batch
	b.reset(n)
	i := 0
	for _, ro := range sets {
		for j := range ro.(*span).set() {
			b.ptrs[i] = b.span(i, &ro.(*span).set()[j])
			i++
		}
	}
	err := e.client.UploadTraces(ctx, []*tracepb.ResourceSpans{{
		Resource:   e.res,
		SchemaUrl:  e.schema,
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: e.scope, Spans: b.ptrs}},
	}})
	if err != nil {
		e.failedAt.Store(time.Now().UnixNano())
		return fmt.Errorf("traces export: %w", err)
	}
	e.failedAt.Store(0)
	return nil
}

func (e *otlpExporter) Shutdown(ctx context.Context) error { return e.client.Stop(ctx) }

// pbBatch holds the OTLP messages of one batch, in slabs.
type pbBatch struct {
	spans []tracepb.Span
	ptrs  []*tracepb.Span
	ids   []byte
	stat  []tracepb.Status
	kv    pbAttrs
}

// reset readies b for n spans, reusing its slabs.
func (b *pbBatch) reset(n int) {
	if cap(b.spans) < n {
		*b = pbBatch{spans: make([]tracepb.Span, n), ptrs: make([]*tracepb.Span, n),
			ids: make([]byte, 0, n*(16+8+8)), stat: make([]tracepb.Status, n)}
		b.kv.reserve(n * 4)
		return
	}
	b.spans, b.ptrs, b.stat, b.ids = b.spans[:n], b.ptrs[:n], b.stat[:n], b.ids[:0]
	clear(b.spans)
	clear(b.stat)
	b.kv.reset()
}

// id appends b to the batch's id slab and returns that copy.
func (b *pbBatch) id(src []byte) []byte {
	n := len(b.ids)
	b.ids = append(b.ids, src...)
	return b.ids[n:len(b.ids):len(b.ids)]
}

func (b *pbBatch) span(i int, s *span) *tracepb.Span {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &b.spans[i]
	p.TraceId, p.SpanId = b.id(tid[:]), b.id(sid[:])
	p.TraceState = sc.TraceState().String()
	if psid := parent.SpanID(); psid.IsValid() {
		p.ParentSpanId = b.id(psid[:])
	}
	// The low byte is the W3C flags; the mask bits say whether the parent
	// is known to be remote, as the SDK's exporter sets them.
	p.Flags = uint32(sc.TraceFlags()) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		p.Flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	p.Name = s.name
	p.Kind = spanKind(s.SpanKind())
	p.StartTimeUnixNano = uint64(max(0, s.start.UnixNano()))
	p.EndTimeUnixNano = uint64(max(0, s.end.UnixNano()))
	p.Attributes = b.kv.list(s.attrs)
	if len(s.events) > 0 {
		p.Events = make([]*tracepb.Span_Event, len(s.events))
		for j, ev := range s.events {
			p.Events[j] = &tracepb.Span_Event{
				Name: ev.Name, TimeUnixNano: uint64(max(0, ev.Time.UnixNano())), Attributes: b.kv.list(ev.Attributes),
			}
		}
	}
	st := &b.stat[i]
	st.Message = s.status.Description
	switch s.status.Code {
	case codes.Error:
		st.Code = tracepb.Status_STATUS_CODE_ERROR
	case codes.Ok:
		st.Code = tracepb.Status_STATUS_CODE_OK
	}
	p.Status = st
	return p
}

func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// pbAttrs converts attributes into slabs: a KeyValue, an AnyValue and its
// oneof wrapper per attribute, three allocations each in the SDK's path.
// A slab that fills is replaced by a new one; what was handed out keeps
// pointing into the old one.
type pbAttrs struct {
	ptrs []*commonpb.KeyValue
	kvs  []commonpb.KeyValue
	vals []commonpb.AnyValue
	strs []commonpb.AnyValue_StringValue
	ints []commonpb.AnyValue_IntValue
	dbls []commonpb.AnyValue_DoubleValue
}

func (a *pbAttrs) reserve(n int) {
	a.ptrs = make([]*commonpb.KeyValue, 0, n)
	a.kvs = make([]commonpb.KeyValue, 0, n)
	a.vals = make([]commonpb.AnyValue, 0, n)
	a.strs = make([]commonpb.AnyValue_StringValue, 0, n)
	a.ints = make([]commonpb.AnyValue_IntValue, 0, n/4)
	a.dbls = make([]commonpb.AnyValue_DoubleValue, 0, n/8)
}

// reset empties the slabs for reuse, zeroed so that they hold on to no
// string of an earlier batch.
func (a *pbAttrs) reset() {
	clear(a.ptrs[:cap(a.ptrs)])
	clear(a.kvs[:cap(a.kvs)])
	clear(a.vals[:cap(a.vals)])
	clear(a.strs[:cap(a.strs)])
	a.ptrs, a.kvs, a.vals, a.strs, a.ints, a.dbls = a.ptrs[:0], a.kvs[:0], a.vals[:0], a.strs[:0], a.ints[:0], a.dbls[:0]
}

// next is a new zero element at the end of slab s, in a new slab when s
// is full (elements handed out before stay where they are).
func next[T any](s *[]T) *T {
	if len(*s) == cap(*s) {
		*s = make([]T, 0, max(16, 2*cap(*s)))
	}
	*s = (*s)[:len(*s)+1]
	return &(*s)[len(*s)-1]
}

func (a *pbAttrs) list(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	if cap(a.ptrs)-len(a.ptrs) < len(kvs) {
		a.ptrs = make([]*commonpb.KeyValue, 0, max(len(kvs), 2*cap(a.ptrs)))
	}
	from := len(a.ptrs)
	for _, kv := range kvs {
		p := next(&a.kvs)
		p.Key = string(kv.Key)
		p.Value = next(&a.vals)
		a.value(p.Value, kv.Value)
		a.ptrs = append(a.ptrs, p)
	}
	return a.ptrs[from:len(a.ptrs):len(a.ptrs)]
}

func (a *pbAttrs) value(dst *commonpb.AnyValue, v attribute.Value) {
	switch v.Type() {
	case attribute.STRING:
		w := next(&a.strs)
		w.StringValue = v.AsString()
		dst.Value = w
	case attribute.INT64:
		w := next(&a.ints)
		w.IntValue = v.AsInt64()
		dst.Value = w
	case attribute.FLOAT64:
		w := next(&a.dbls)
		w.DoubleValue = v.AsFloat64()
		dst.Value = w
	case attribute.BOOL:
		dst.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	default:
		// Slices appear in no span of engram's; a resource attribute given
		// as one is sent in its string form rather than lost.
		dst.Value = &commonpb.AnyValue_StringValue{StringValue: v.String()}
	}
}
