package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"engram/backend/telemetry"
	"engram/ingest"
)

// otlpSink is an OTLP/HTTP endpoint that keeps the requests it receives.
type otlpSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*collectorpb.ExportTraceServiceRequest
}

func newSink(t *testing.T) *otlpSink {
	s := &otlpSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &collectorpb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			t.Errorf("the exporter sent a body that is not an OTLP request: %v", err)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// request is everything received, as one request.
func (s *otlpSink) request(t *testing.T) *collectorpb.ExportTraceServiceRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(s.reqs))
	}
	return s.reqs[0]
}

// TestOTLPAsTheSDKSendsIt: engram's own conversion of its spans to OTLP
// (otlp.go) sends what the SDK's OTLP exporter sends for the same spans,
// field for field: for an ingested event with a retry and an agent's
// parent, and for a rejected one. Child span ids are random per export,
// so they are compared as "set" only.
func TestOTLPAsTheSDKSendsIt(t *testing.T) {
	ours, theirs := newSink(t), newSink(t)
	sdkExp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(theirs.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := telemetry.Config{ServiceName: "engram-otlp-test", ArchiveBackend: "dir", IndexBackend: "sqlite"}
	withOurs, withSDK := cfg, cfg
	withOurs.Endpoint, withSDK.Exporter = ours.srv.URL, sdkExp
	s := newStores(t)
	s.cfg.Archive = &failingArchive{Archive: s.cfg.Archive}
	s.cfg.Retry = ingest.RetryPolicy{Initial: time.Millisecond, Max: time.Millisecond}
	traces := s.run(t, nil,
		ingest.Item{Data: event("o1", `"traceId":"`+agentTrace+`","spanId":"`+agentSpan+`"`)},
		ingest.Item{Data: []byte(`{"eventId":"o2","type":"nonsense"}`)})
	for _, c := range []telemetry.Config{withOurs, withSDK} {
		tel, err := telemetry.New(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		tel.Export(traces["o1"])
		tel.Export(traces["o2"])
		if st := tel.Shutdown(context.Background()); st.Lost() != 0 || st.FirstErr != nil {
			t.Fatalf("stats %+v", st)
		}
	}
	a, b := ours.request(t), theirs.request(t)
	spans := func(r *collectorpb.ExportTraceServiceRequest) int { return len(r.ResourceSpans[0].ScopeSpans[0].Spans) }
	if spans(a) != 10 || spans(b) != 10 {
		t.Fatalf("%d and %d spans, want 8 + 2", spans(a), spans(b))
	}
	for _, r := range []*collectorpb.ExportTraceServiceRequest{a, b} {
		for _, sp := range r.ResourceSpans[0].ScopeSpans[0].Spans {
			if sp.Name != telemetry.RootSpan {
				if len(sp.SpanId) != 8 {
					t.Errorf("%s: span id %x", sp.Name, sp.SpanId)
				}
				sp.SpanId = []byte("set")
			}
		}
	}
	if !proto.Equal(a, b) {
		t.Errorf("engram's OTLP differs from the SDK's:\nengram: %v\nSDK:    %v", a, b)
	}
	root := a.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if root.Name != telemetry.RootSpan || len(root.ParentSpanId) == 0 {
		t.Errorf("first span %v, want the root with the agent's parent", root)
	}
}
