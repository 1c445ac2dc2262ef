package telemetry_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"engram/backend/telemetry"
	"engram/ingest"
)

const (
	agentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentSpan  = "00f067aa0ba902b7"
	kafkaTrace = "0af7651916cd43dd8448eb211c80319c"
	kafkaSpan  = "b7ad6b7169203331"
)

func memTelemetry(t *testing.T) (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{
		Exporter: exp, ArchiveBackend: "dir", IndexBackend: "sqlite",
	})
	if err != nil {
		t.Fatal(err)
	}
	// Shutdown would empty the in-memory exporter: tests Flush, then read.
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel, exp
}

// spansOf groups exported spans by trace id.
func spansOf(spans tracetest.SpanStubs) map[string][]tracetest.SpanStub {
	out := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		id := s.SpanContext.TraceID().String()
		out[id] = append(out[id], s)
	}
	return out
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func byName(spans []tracetest.SpanStub, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

// TestSpansOfOneIngestion checks the shape of an event's spans: the root
// with the cog.* attributes, one child per stage that ran under the source
// system's names, times taken from the stage records, and ids equal to the
// ones the pipeline put on the trace.
func TestSpansOfOneIngestion(t *testing.T) {
	tel, exp := memTelemetry(t)
	s := newStores(t)
	traces := s.run(t, tel.Observe(nil), ingest.Item{Data: event("e1", "")})
	tel.Flush(context.Background())
	tr := traces["e1"]
	if tr == nil || tr.Outcome != ingest.OutcomeIngested {
		t.Fatalf("trace %+v", tr)
	}
	got := spansOf(exp.GetSpans())[tr.Span.TraceID.String()]
	names := map[string]bool{}
	for _, sp := range got {
		names[sp.Name] = true
	}
	for _, want := range []string{"experience.ingest", "experience.validate", "experience.embed", "experience.score",
		"experience.key", "experience.objectstore.put", "experience.opensearch.index", "experience.publish"} {
		if !names[want] {
			t.Errorf("no span %s among %v", want, names)
		}
	}
	if len(got) != 8 {
		t.Errorf("%d spans, want 8", len(got))
	}
	root := byName(got, "experience.ingest")
	if root == nil {
		t.Fatal("no root")
	}
	if root.Parent.IsValid() {
		t.Errorf("root has parent %v, want a new trace", root.Parent)
	}
	if root.SpanContext.SpanID().String() != tr.Span.SpanID.String() {
		t.Errorf("root span id %s, trace says %s", root.SpanContext.SpanID(), tr.Span.SpanID)
	}
	for k, want := range map[string]string{"cog.event.id": "e1", "cog.event.type": "user_input", "cog.session.id": "sess-e1",
		"cog.memory.index": "experience_events", "cog.outcome": "ingested"} {
		if got := attr(*root, k); got != want {
			t.Errorf("root %s = %q, want %q", k, got, want)
		}
	}
	if attr(*root, "cog.importance.score") == "" {
		t.Error("root has no cog.importance.score")
	}
	if !root.StartTime.Equal(tr.Start) || !root.EndTime.Equal(tr.Start.Add(tr.Total)) {
		t.Errorf("root %v..%v, trace %v + %v", root.StartTime, root.EndTime, tr.Start, tr.Total)
	}
	for _, sp := range got {
		if sp.Name != "experience.ingest" && sp.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s's parent is %s, not the root", sp.Name, sp.Parent.SpanID())
		}
	}
	emb := byName(got, "experience.embed")
	if attr(*emb, "cog.embedding.dim") != "8" {
		t.Errorf("embed dim %q", attr(*emb, "cog.embedding.dim"))
	}
	put := byName(got, "experience.objectstore.put")
	if attr(*put, "cog.objectstore.backend") != "dir" || attr(*put, "cog.objectstore.key") != tr.Key {
		t.Errorf("objectstore attributes %v", put.Attributes)
	}
	r := tr.Stages[ingest.StageArchive]
	if !put.StartTime.Equal(r.Start) || !put.EndTime.Equal(r.Start.Add(r.Duration)) {
		t.Errorf("put %v..%v, record %v + %v", put.StartTime, put.EndTime, r.Start, r.Duration)
	}
	ix := byName(got, "experience.opensearch.index")
	if attr(*ix, "cog.index.backend") != "sqlite" {
		t.Errorf("index attributes %v", ix.Attributes)
	}
}

// TestParents: an event carrying W3C context.traceId/spanId lands in that
// trace under that span; an item's traceparent (a Kafka header) wins over
// it and carries its tracestate; a traceId alone joins the trace as a root.
func TestParents(t *testing.T) {
	tel, exp := memTelemetry(t)
	s := newStores(t)
	traces := s.run(t, tel.Observe(nil),
		ingest.Item{Data: event("agent", `"traceId":"`+agentTrace+`","spanId":"`+agentSpan+`"`)},
		ingest.Item{Data: event("kafka", `"traceId":"`+agentTrace+`","spanId":"`+agentSpan+`"`),
			Traceparent: "00-" + kafkaTrace + "-" + kafkaSpan + "-01", Tracestate: "vendor=x"},
		ingest.Item{Data: event("onlytrace", `"traceId":"`+agentTrace+`"`)},
		ingest.Item{Data: event("notw3c", `"traceId":"demo-trace-001","spanId":"x"`)},
	)
	tel.Flush(context.Background())
	byTrace := spansOf(exp.GetSpans())
	rootOf := func(id string) *tracetest.SpanStub {
		tr := traces[id]
		for _, sp := range byTrace[tr.Span.TraceID.String()] {
			if sp.Name == "experience.ingest" && attr(sp, "cog.event.id") == id {
				return &sp
			}
		}
		t.Fatalf("%s: no root span in trace %s", id, tr.Span.TraceID)
		return nil
	}
	if r := rootOf("agent"); r.SpanContext.TraceID().String() != agentTrace || r.Parent.SpanID().String() != agentSpan {
		t.Errorf("agent: trace %s parent %s", r.SpanContext.TraceID(), r.Parent.SpanID())
	}
	r := rootOf("kafka")
	if r.SpanContext.TraceID().String() != kafkaTrace || r.Parent.SpanID().String() != kafkaSpan {
		t.Errorf("kafka: trace %s parent %s", r.SpanContext.TraceID(), r.Parent.SpanID())
	}
	if r.SpanContext.TraceState().Get("vendor") != "x" {
		t.Errorf("kafka: tracestate %q", r.SpanContext.TraceState())
	}
	if r := rootOf("onlytrace"); r.SpanContext.TraceID().String() != agentTrace || r.Parent.IsValid() {
		t.Errorf("onlytrace: trace %s parent %v", r.SpanContext.TraceID(), r.Parent)
	}
	if r := rootOf("notw3c"); r.SpanContext.TraceID().String() == agentTrace || r.Parent.IsValid() {
		t.Errorf("notw3c: trace %s parent %v, want a new trace", r.SpanContext.TraceID(), r.Parent)
	}
	// The notification a producer sends for an ingestion carries its root.
	if got, want := traces["kafka"].Span.Traceparent(), "00-"+kafkaTrace+"-"+traces["kafka"].Span.SpanID.String()+"-01"; got != want {
		t.Errorf("Traceparent %s, want %s", got, want)
	}
}

// TestUnsampledParent: a traceparent whose sampled flag is off is
// respected by the default parent-based sampler: no spans.
func TestUnsampledParent(t *testing.T) {
	tel, exp := memTelemetry(t)
	s := newStores(t)
	s.run(t, tel.Observe(nil), ingest.Item{Data: event("u", ""), Traceparent: "00-" + kafkaTrace + "-" + kafkaSpan + "-00"})
	tel.Flush(context.Background())
	n := len(exp.GetSpans())
	if st := tel.Shutdown(context.Background()); n != 0 || st.Spans != 0 {
		t.Errorf("%d spans exported, %d counted; want none", n, st.Spans)
	}
}

// TestFailureAndRejection: a rejected event's validate span is an error
// with the reason, and so is its root; the stages it never ran have no
// span.
func TestFailureAndRejection(t *testing.T) {
	tel, exp := memTelemetry(t)
	s := newStores(t)
	traces := s.run(t, tel.Observe(nil), ingest.Item{Data: []byte(`{"eventId":"bad","type":"nonsense"}`)})
	tel.Flush(context.Background())
	tr := traces["bad"]
	if tr == nil || tr.Outcome != ingest.OutcomeRejected {
		t.Fatalf("trace %+v", tr)
	}
	got := spansOf(exp.GetSpans())[tr.Span.TraceID.String()]
	if len(got) != 2 {
		t.Fatalf("%d spans, want root and validate: %v", len(got), got)
	}
	v := byName(got, "experience.validate")
	if v == nil || v.Status.Code != codes.Error || !strings.Contains(v.Status.Description, "type") {
		t.Errorf("validate span status %+v", v)
	}
	if root := byName(got, "experience.ingest"); root.Status.Code != codes.Error {
		t.Errorf("root status %+v", root.Status)
	}
}

// failingArchive fails its first Put with a transient error, so the stage
// is retried once.
type failingArchive struct {
	ingest.Archive
	failed bool
}

func (a *failingArchive) Put(ctx context.Context, key string, body []byte) (bool, error) {
	if !a.failed {
		a.failed = true
		return false, &net.OpError{Op: "dial", Err: timeoutErr{}}
	}
	return a.Archive.Put(ctx, key, body)
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestRetryIsAnEvent: a retried archive write shows as a "retry" event on
// the objectstore span, with the attempt and the error.
func TestRetryIsAnEvent(t *testing.T) {
	tel, exp := memTelemetry(t)
	s := newStores(t)
	s.cfg.Archive = &failingArchive{Archive: s.cfg.Archive}
	s.cfg.Retry = ingest.RetryPolicy{Initial: time.Millisecond, Max: time.Millisecond}
	traces := s.run(t, tel.Observe(nil), ingest.Item{Data: event("r", "")})
	tel.Flush(context.Background())
	if traces["r"].Outcome != ingest.OutcomeIngested {
		t.Fatalf("outcome %v: %v", traces["r"].Outcome, traces["r"].Err)
	}
	put := byName(spansOf(exp.GetSpans())[traces["r"].Span.TraceID.String()], "experience.objectstore.put")
	if put == nil || len(put.Events) != 1 || put.Events[0].Name != "retry" {
		t.Fatalf("objectstore span events %+v", put)
	}
	ev := put.Events[0]
	var attempt, msg string
	for _, a := range ev.Attributes {
		switch a.Key {
		case "cog.retry.attempt":
			attempt = a.Value.String()
		case "cog.retry.error":
			msg = a.Value.String()
		}
	}
	if attempt != "1" || !strings.Contains(msg, "timeout") {
		t.Errorf("retry event attempt %q error %q", attempt, msg)
	}
}

// TestOffCostsNothing: no endpoint (or OTEL_SDK_DISABLED) is no
// Telemetry at all, and Observe hands the caller's observer back as it is.
func TestOffCostsNothing(t *testing.T) {
	for _, c := range []telemetry.Config{{}, {Endpoint: "http://127.0.0.1:4318", Disabled: true}} {
		tel, err := telemetry.New(context.Background(), c)
		if err != nil || tel != nil {
			t.Fatalf("New(%+v) = %v, %v; want nil, nil", c, tel, err)
		}
		var next ingest.Observer = nopObserver{}
		if got := tel.Observe(next); got != next {
			t.Errorf("Observe on nil telemetry wrapped the observer: %T", got)
		}
		if st := tel.Shutdown(context.Background()); st != (telemetry.Stats{}) {
			t.Errorf("Shutdown on nil: %+v", st)
		}
	}
}

type nopObserver struct{}

func (nopObserver) Stage(ingest.StageEvent) {}
func (nopObserver) Done(*ingest.Trace)      {}

// outageRecorder is an observer that also hears about outages.
type outageRecorder struct {
	nopObserver
	outages int
}

func (o *outageRecorder) Outage(ingest.Outage)   { o.outages++ }
func (o *outageRecorder) Recovered(ingest.Stage) {}

// TestObserveKeepsOutages: wrapping an OutageObserver keeps it one, so the
// CLI's and the inspector's outage lines survive tracing being on.
func TestObserveKeepsOutages(t *testing.T) {
	tel, _ := memTelemetry(t)
	rec := &outageRecorder{}
	oo, ok := tel.Observe(rec).(ingest.OutageObserver)
	if !ok {
		t.Fatal("the wrapped observer is no longer an OutageObserver")
	}
	oo.Outage(ingest.Outage{})
	if rec.outages != 1 {
		t.Errorf("outage not passed on")
	}
}

func TestTraceparentHelpers(t *testing.T) {
	sc, err := telemetry.ParentContext("00-"+kafkaTrace+"-"+kafkaSpan+"-01", "a=b")
	if err != nil {
		t.Fatal(err)
	}
	if got := telemetry.SpanTraceparent(sc); got != "00-"+kafkaTrace+"-"+kafkaSpan+"-01" {
		t.Errorf("round trip: %s", got)
	}
	if got := telemetry.Traceparent(trace.ContextWithSpanContext(context.Background(), sc)); got != "00-"+kafkaTrace+"-"+kafkaSpan+"-01" {
		t.Errorf("Traceparent(ctx) = %s", got)
	}
	if telemetry.Traceparent(context.Background()) != "" {
		t.Error("Traceparent of a context without a span is not empty")
	}
	for _, bad := range []string{"", "00-" + kafkaTrace + "-" + kafkaSpan, "00-00000000000000000000000000000000-" + kafkaSpan + "-01",
		"00-" + strings.ToUpper(kafkaTrace) + "-" + kafkaSpan + "-01", "ff-" + kafkaTrace + "-" + kafkaSpan + "-01",
		"00-" + kafkaTrace + "-" + kafkaSpan + "-01-extra"} {
		if _, err := telemetry.ParentContext(bad, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A later version may add fields after the flags.
	if _, err := telemetry.ParentContext("01-"+kafkaTrace+"-"+kafkaSpan+"-01-extra", ""); err != nil {
		t.Errorf("future version refused: %v", err)
	}
}

// TestConfigErrors: a mistake in the OTEL_* values is an error naming the
// variable (and never a header's value).
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  telemetry.Config
		want string
	}{
		{telemetry.Config{Endpoint: "ftp://x"}, "http:// or https://"},
		{telemetry.Config{Endpoint: "http://x", Protocol: "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{telemetry.Config{Endpoint: "http://x", Headers: "Authorization"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{telemetry.Config{Endpoint: "http://x", Sampler: "sometimes"}, "OTEL_TRACES_SAMPLER"},
		{telemetry.Config{Endpoint: "http://x", Sampler: "traceidratio", SamplerArg: "2"}, "OTEL_TRACES_SAMPLER_ARG"},
		{telemetry.Config{Endpoint: "http://x", ResourceAttributes: "=v"}, "OTEL_RESOURCE_ATTRIBUTES"},
	} {
		_, err := telemetry.New(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", c.cfg, err, c.want)
		}
	}
	_, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: "http://x", Headers: "a=%zz-secret"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad header: %v", err)
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct {
		cfg  telemetry.Config
		want string
	}{
		{telemetry.Config{Endpoint: "http://collector:4318"}, "http://collector:4318/v1/traces"},
		{telemetry.Config{Endpoint: "http://collector:4318/base/"}, "http://collector:4318/base/v1/traces"},
		{telemetry.Config{Endpoint: "http://collector:4318", TracesEndpoint: "https://t:443/custom"}, "https://t:443/custom"},
		{telemetry.Config{Endpoint: "collector:4317", Protocol: "grpc"}, "http://collector:4317"},
	} {
		if got := c.cfg.URL(); got != c.want {
			t.Errorf("%+v: URL %s, want %s", c.cfg, got, c.want)
		}
	}
}

// TestExporterNeverBlocks: an exporter that takes forever does not slow
// the pipeline (spans wait in the queue, then are dropped), and Shutdown
// returns by its deadline, counting what it lost.
func TestExporterNeverBlocks(t *testing.T) {
	stuck := &stuckExporter{release: make(chan struct{})}
	defer close(stuck.release)
	tel, err := telemetry.New(context.Background(), telemetry.Config{Exporter: stuck, QueueSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	s := newStores(t)
	items := make([]ingest.Item, 50)
	for i := range items {
		items[i] = ingest.Item{Data: event("n"+string(rune('a'+i%26))+string(rune('a'+i/26)), "")}
	}
	start := time.Now()
	traces := s.run(t, tel.Observe(nil), items...)
	ran := time.Since(start)
	for id, tr := range traces {
		if tr.Outcome != ingest.OutcomeIngested {
			t.Errorf("%s: %v", id, tr.Outcome)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	st := tel.Shutdown(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Shutdown took %v past its 200ms deadline", took)
	}
	if st.Spans != 50*8 || st.Exported != 0 || st.Lost() != st.Spans {
		t.Errorf("stats %+v (ingest took %v)", st, ran)
	}
}

type stuckExporter struct{ release chan struct{} }

func (e *stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-e.release:
	case <-ctx.Done():
	}
	return ctx.Err()
}
func (e *stuckExporter) Shutdown(context.Context) error { return nil }

// TestMainStageSpans: with StageSpans "main" an event has the root and the
// source system's three children only; engram's own stages are the
// root's cog.stage.*.duration_us, equal to the stage records' (what the
// waterfall draws); a rejected event's validate is an attribute of its
// root, whose status carries the reason.
func TestMainStageSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{Exporter: exp, StageSpans: "main"})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	traces := newStores(t).run(t, tel.Observe(nil), ingest.Item{Data: event("m1", "")},
		ingest.Item{Data: []byte(`{"eventId":"m2","type":"nonsense"}`)})
	tel.Flush(context.Background())
	all := spansOf(exp.GetSpans())
	tr := traces["m1"]
	got := all[tr.Span.TraceID.String()]
	var names []string
	for _, sp := range got {
		names = append(names, sp.Name)
	}
	if strings.Join(names, " ") != "experience.ingest experience.embed experience.objectstore.put experience.opensearch.index" {
		t.Errorf("spans %v", names)
	}
	root := byName(got, "experience.ingest")
	for stage, key := range map[ingest.Stage]string{ingest.StageValidate: "cog.stage.validate.duration_us",
		ingest.StageScore: "cog.stage.score.duration_us", ingest.StageKey: "cog.stage.key.duration_us",
		ingest.StagePublish: "cog.stage.publish.duration_us"} {
		if got, want := attr(*root, key), fmt.Sprint(tr.Stages[stage].Duration.Microseconds()); got != want {
			t.Errorf("root %s = %q, the stage record says %s", key, got, want)
		}
	}
	bad := all[traces["m2"].Span.TraceID.String()]
	if len(bad) != 1 || bad[0].Status.Code != codes.Error || attr(bad[0], "cog.stage.validate.duration_us") == "" {
		t.Errorf("rejected event's spans %+v, want its root alone, an error with cog.stage.validate.duration_us", bad)
	}
	if _, err := telemetry.New(context.Background(), telemetry.Config{Exporter: exp, StageSpans: "some"}); err == nil {
		t.Error("StageSpans \"some\" accepted")
	}
}

// TestSamplers: OTEL_TRACES_SAMPLER decides on the finished spans as the
// SDK's tracer would: always_off and a ratio of 0 export nothing,
// always_on exports even under an unsampled parent, and a sampled run of
// engram reindex follows the same sampler.
func TestSamplers(t *testing.T) {
	unsampled := "00-" + kafkaTrace + "-" + kafkaSpan + "-00"
	for _, c := range []struct {
		sampler, arg, traceparent string
		ingest, reindex           int // spans of the event; of the reindex run (no parent)
	}{
		{"always_off", "", "", 0, 0},
		{"traceidratio", "0", "", 0, 0},
		{"traceidratio", "1", "", 8, 1},
		{"always_on", "", unsampled, 8, 1},
		{"parentbased_always_on", "", unsampled, 0, 1},
	} {
		exp := tracetest.NewInMemoryExporter()
		tel, err := telemetry.New(context.Background(), telemetry.Config{Exporter: exp, Sampler: c.sampler, SamplerArg: c.arg})
		if err != nil {
			t.Fatal(err)
		}
		newStores(t).run(t, tel.Observe(nil), ingest.Item{Data: event("s", ""), Traceparent: c.traceparent})
		rt := tel.StartReindex("", "", "ix")
		rt.End(ingest.ReindexSummary{}, nil)
		tel.Flush(context.Background())
		if got := len(exp.GetSpans()); got != c.ingest+c.reindex {
			t.Errorf("%s %s parent %q: %d spans, want %d + %d", c.sampler, c.arg, c.traceparent, got, c.ingest, c.reindex)
		}
		tel.Shutdown(context.Background())
	}
}
