package telemetry_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"engram/backend/telemetry"
	"engram/ingest"
)

// jaeger is a real Jaeger started by .ci/services/jaeger.sh: its query API
// and its OTLP endpoints.
type jaeger struct {
	query, otlpHTTP, otlpGRPC string
}

// needJaeger skips (one line) without a Jaeger, and fails instead under
// ENGRAM_REQUIRE_SERVICES=1, as CI sets it.
func needJaeger(t *testing.T) jaeger {
	j := jaeger{os.Getenv("ENGRAM_TEST_JAEGER_URL"), os.Getenv("ENGRAM_TEST_OTLP_ENDPOINT"), os.Getenv("ENGRAM_TEST_OTLP_GRPC_ENDPOINT")}
	if j.query == "" || j.otlpHTTP == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_TEST_JAEGER_URL or ENGRAM_TEST_OTLP_ENDPOINT is not set but ENGRAM_REQUIRE_SERVICES=1")
		}
		t.Skip("ENGRAM_TEST_JAEGER_URL not set (bash .ci/services/jaeger.sh start; eval \"$(bash .ci/services/jaeger.sh env)\")")
	}
	return j
}

// Jaeger's query API (api/traces), the fields the tests read.
type jTrace struct {
	TraceID   string              `json:"traceID"`
	Spans     []jSpan             `json:"spans"`
	Processes map[string]jProcess `json:"processes"`
}

type jSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64  `json:"startTime"` // µs since the epoch
	Duration  int64  `json:"duration"`  // µs
	Tags      []jTag `json:"tags"`
	Logs      []struct {
		Fields []jTag `json:"fields"`
	} `json:"logs"`
	ProcessID string `json:"processID"`
}

type jTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

type jProcess struct {
	ServiceName string `json:"serviceName"`
}

func (s jSpan) tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

func (s jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (j jaeger) get(t *testing.T, path string, out any) int {
	t.Helper()
	resp, err := http.Get(j.query + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

// trace polls GET /api/traces/{id} until it holds at least n spans (Jaeger
// stores what it receives after a batching delay of its own).
func (j jaeger) trace(t *testing.T, id string, n int) jTrace {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var resp struct{ Data []jTrace }
		code := j.get(t, "/api/traces/"+id, &resp)
		if code == http.StatusOK && len(resp.Data) == 1 && len(resp.Data[0].Spans) >= n {
			return resp.Data[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s: want %d spans in Jaeger, got status %d, %+v", id, n, code, resp.Data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// jaegerTelemetry exports to j under a service name of the test's own, so
// that listings by service see only this test's traces.
func jaegerTelemetry(t *testing.T, cfg telemetry.Config) (*telemetry.Telemetry, string) {
	cfg.ServiceName = "engram-test-" + randomHex(4)
	cfg.ArchiveBackend, cfg.IndexBackend = "dir", "sqlite"
	cfg.ResourceAttributes = "deployment.environment.name=test,engram.test=" + url.PathEscape(t.Name())
	tel, err := telemetry.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel, cfg.ServiceName
}

// TestJaegerIngestSpans ingests through the real pipeline into embedded
// stores with spans exported over OTLP/HTTP, and reads them back from
// Jaeger's query API: names, the parent/child structure, attributes, the
// service, an event that carried W3C context ids inside the agent's trace,
// and the listing by service.
func TestJaegerIngestSpans(t *testing.T) {
	j := needJaeger(t)
	tel, service := jaegerTelemetry(t, telemetry.Config{Endpoint: j.otlpHTTP})
	agentTrace, agentSpan := randomHex(16), randomHex(8)
	s := newStores(t)
	traces := s.run(t, tel.Observe(nil),
		ingest.Item{Data: event("j-agent", `"traceId":"`+agentTrace+`","spanId":"`+agentSpan+`"`)},
		ingest.Item{Data: event("j-plain", "")},
		ingest.Item{Data: []byte(`{"eventId":"j-bad","type":"nonsense"}`)},
	)
	if err := tel.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := tel.Shutdown(context.Background()); st.Lost() != 0 || st.FirstErr != nil {
		t.Fatalf("spans lost exporting to a running Jaeger: %+v", st)
	}

	jt := j.trace(t, agentTrace, 8)
	byName := map[string]jSpan{}
	for _, sp := range jt.Spans {
		byName[sp.OperationName] = sp
	}
	root, ok := byName["experience.ingest"]
	if !ok {
		t.Fatalf("no experience.ingest in %v", byName)
	}
	if root.parent() != agentSpan {
		t.Errorf("root's parent %q, want the event's context.spanId %s", root.parent(), agentSpan)
	}
	if root.SpanID != traces["j-agent"].Span.SpanID.String() {
		t.Errorf("root span id %s, pipeline's trace says %s", root.SpanID, traces["j-agent"].Span.SpanID)
	}
	if got := jt.Processes[root.ProcessID].ServiceName; got != service {
		t.Errorf("service %q, want %q", got, service)
	}
	for k, want := range map[string]string{"cog.event.id": "j-agent", "cog.event.type": "user_input",
		"cog.session.id": "sess-j-agent", "cog.memory.index": "experience_events", "cog.outcome": "ingested"} {
		if got := root.tag(k); got != want {
			t.Errorf("root tag %s = %q, want %q", k, got, want)
		}
	}
	if root.tag("cog.importance.score") == "" {
		t.Error("root has no cog.importance.score")
	}
	for _, name := range []string{"experience.validate", "experience.embed", "experience.score", "experience.key",
		"experience.objectstore.put", "experience.opensearch.index", "experience.publish"} {
		sp, ok := byName[name]
		if !ok {
			t.Errorf("no %s span", name)
			continue
		}
		if sp.parent() != root.SpanID {
			t.Errorf("%s's parent %q, want the root %s", name, sp.parent(), root.SpanID)
		}
		if sp.StartTime < root.StartTime || sp.StartTime+sp.Duration > root.StartTime+root.Duration+1 {
			t.Errorf("%s [%d +%d] outside the root [%d +%d]", name, sp.StartTime, sp.Duration, root.StartTime, root.Duration)
		}
	}
	if got := byName["experience.embed"].tag("cog.embedding.dim"); got != "8" {
		t.Errorf("cog.embedding.dim %q", got)
	}
	if got := byName["experience.objectstore.put"].tag("cog.objectstore.backend"); got != "dir" {
		t.Errorf("cog.objectstore.backend %q", got)
	}
	if got := byName["experience.opensearch.index"].tag("cog.index.backend"); got != "sqlite" {
		t.Errorf("cog.index.backend %q", got)
	}

	// The rejected event: root and validate, both errors.
	bad := j.trace(t, traces["j-bad"].Span.TraceID.String(), 2)
	for _, sp := range bad.Spans {
		if sp.tag("otel.status_code") != "ERROR" {
			t.Errorf("rejected event's %s: status %q, want ERROR", sp.OperationName, sp.tag("otel.status_code"))
		}
	}

	// Listed by service: the three ingestions' traces.
	var list struct{ Data []jTrace }
	deadline := time.Now().Add(30 * time.Second)
	for {
		j.get(t, "/api/traces?limit=20&lookback=1h&service="+url.QueryEscape(service), &list)
		if len(list.Data) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	found := map[string]bool{}
	for _, tr := range list.Data {
		found[tr.TraceID] = true
	}
	for _, id := range []string{"j-agent", "j-plain", "j-bad"} {
		if !found[traces[id].Span.TraceID.String()] {
			t.Errorf("%s's trace %s not listed for service %s (listed: %v)", id, traces[id].Span.TraceID, service, found)
		}
	}
}

// TestJaegerTraceparent: an item's traceparent (what a Kafka consumer
// passes on from the message's header) is the parent, and its tracestate
// is passed through, over gRPC this time.
func TestJaegerTraceparent(t *testing.T) {
	j := needJaeger(t)
	if j.otlpGRPC == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_TEST_OTLP_GRPC_ENDPOINT is not set but ENGRAM_REQUIRE_SERVICES=1")
		}
		t.Skip("ENGRAM_TEST_OTLP_GRPC_ENDPOINT not set")
	}
	tel, _ := jaegerTelemetry(t, telemetry.Config{Endpoint: j.otlpGRPC, Protocol: "grpc"})
	producerTrace, producerSpan := randomHex(16), randomHex(8)
	s := newStores(t)
	s.run(t, tel.Observe(nil), ingest.Item{Data: event("j-kafka", ""),
		Traceparent: "00-" + producerTrace + "-" + producerSpan + "-01", Tracestate: "engram=test"})
	tel.Flush(context.Background())
	jt := j.trace(t, producerTrace, 8)
	for _, sp := range jt.Spans {
		if sp.OperationName == "experience.ingest" {
			if sp.parent() != producerSpan {
				t.Errorf("root's parent %q, want the traceparent's span %s", sp.parent(), producerSpan)
			}
			if got := sp.tag("w3c.tracestate"); got != "engram=test" {
				t.Errorf("root's tracestate %q, want the message's engram=test passed through", got)
			}
			return
		}
	}
	t.Fatalf("no root span in %+v", jt.Spans)
}

// TestCollectorDown: with the collector's address pointing at a closed
// port, every event ends as without spans, the run is not held up, the
// flush at exit returns at once, and every span is counted as lost.
func TestCollectorDown(t *testing.T) {
	items := func() []ingest.Item {
		out := make([]ingest.Item, 200)
		for i := range out {
			out[i] = ingest.Item{Data: event(fmt.Sprintf("down-%03d", i), "")}
		}
		return out
	}
	start := time.Now()
	want := outcomes(newStores(t).run(t, nil, items()...))
	off := time.Since(start)

	tel, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: "http://" + closedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	got := outcomes(newStores(t).run(t, tel.Observe(nil), items()...))
	on := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.FlushTimeout)
	defer cancel()
	start = time.Now()
	st := tel.Shutdown(ctx)
	flush := time.Since(start)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outcomes differ with the collector down:\n%v\nwithout spans:\n%v", got, want)
	}
	t.Logf("200 events: %v without spans, %v with the collector down (%.2f×); flush at exit %v", off, on, on.Seconds()/off.Seconds(), flush)
	// Generous bounds: this is about blocking (a stuck export would take
	// seconds per batch), not speed; BenchmarkIngestSpans measures that.
	if on > 3*off+2*time.Second {
		t.Errorf("ingest took %v with the collector down, %v without", on, off)
	}
	if flush > 2*time.Second {
		t.Errorf("flush at exit took %v with the collector down", flush)
	}
	if st.Spans != 200*8 || st.Exported != 0 || st.FirstErr == nil || !strings.Contains(st.FirstErr.Error(), "refused") {
		t.Errorf("stats %+v, want 1600 spans made, none exported, connection refused", st)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
