package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/ingest"
	"engram/model"
	"engram/ui"
)

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestTracingSettings: the standard OTEL_* variables are settings like any
// other: shown by engram config with where they came from, the headers
// (credentials) redacted.
func TestTracingSettings(t *testing.T) {
	c := newCLI(t)
	c.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://collector:4318"
	c.env["OTEL_EXPORTER_OTLP_HEADERS"] = "authorization=Bearer " + knownSecret
	c.env["OTEL_SERVICE_NAME"] = "engram-test"
	out, stderr, code := c.run("", "config", "--otel-protocol", "grpc", "--trace-url", "http://localhost:16686/trace/{traceId}")
	if code != 0 {
		t.Fatalf("config: %d %s", code, stderr)
	}
	for _, want := range []string{
		"otel.endpoint  http://collector:4318  env OTEL_EXPORTER_OTLP_ENDPOINT",
		"otel.headers  <redacted>  env OTEL_EXPORTER_OTLP_HEADERS",
		"otel.protocol  grpc  flag --otel-protocol",
		"otel.service_name  engram-test  env OTEL_SERVICE_NAME",
		"otel.traces_sampler  parentbased_always_on  default",
		"otel.sdk_disabled  false  default",
		"trace.url  http://localhost:16686/trace/{traceId}  flag --trace-url",
	} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, knownSecret) {
		t.Errorf("config printed the OTLP headers:\n%s", out)
	}
	c.env["OTEL_TRACES_SAMPLER"] = "sometimes"
	if _, stderr, code := c.run("", "config"); code == 0 || !strings.Contains(stderr, "otel.traces_sampler") {
		t.Errorf("bad sampler accepted: %d %s", code, stderr)
	}
}

// TestTracingProfile: the otel.* keys live in config-file profiles like the
// others, and the environment still wins over them.
func TestTracingProfile(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(c.env["HOME"], ".config", "engram")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "[profiles.default.otel]\nendpoint = \"http://profile:4318\"\nservice_name = \"from-profile\"\n[profiles.default.trace]\nurl = \"https://tempo/{traceId}\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env["OTEL_SERVICE_NAME"] = "from-env"
	out, stderr, code := c.run("", "config")
	if code != 0 {
		t.Fatalf("config: %d %s", code, stderr)
	}
	for _, want := range []string{"otel.endpoint  http://profile:4318  profile default",
		"otel.service_name  from-env  env OTEL_SERVICE_NAME", "trace.url  https://tempo/{traceId}  profile default"} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
}

// squeeze collapses runs of spaces to two, as tabwriter pads columns.
func squeeze(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}

// TestIngestWithCollectorDown: spans to a port nothing listens on change
// nothing about ingestion (same summary, exit 0), the run does not hang at
// exit, and one line says how many spans were lost, without the headers.
func TestIngestWithCollectorDown(t *testing.T) {
	input := demoLines(30)
	off := newCLI(t)
	_, offErr, code := off.run(input, "ingest")
	if code != 0 {
		t.Fatalf("ingest without tracing: %d %s", code, offErr)
	}
	on := newCLI(t)
	on.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://" + closedPort(t)
	on.env["OTEL_EXPORTER_OTLP_HEADERS"] = "x-token=" + knownSecret
	start := time.Now()
	_, onErr, code := on.run(input, "ingest")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("ingest with the collector down: %d %s", code, onErr)
	}
	if got, want := summaryLine(onErr), summaryLine(offErr); got != want {
		t.Errorf("summary %q, without tracing %q", got, want)
	}
	if n := strings.Count(onErr, "engram: tracing:"); n != 1 || !strings.Contains(onErr, "240 of 240 spans not exported") {
		t.Errorf("want one line counting 240 lost spans, got:\n%s", onErr)
	}
	if strings.Contains(onErr, knownSecret) {
		t.Errorf("the OTLP headers were printed:\n%s", onErr)
	}
	if took > 10*time.Second {
		t.Errorf("ingest took %v with the collector down", took)
	}
}

// summaryLine is the "ingested N, ..." line without its timing.
func summaryLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "ingested ") {
			s, _, _ := strings.Cut(l, " in ")
			return s
		}
	}
	return ""
}

// doneCounter is an observer counting finished traces.
type doneCounter struct{ n int }

func (d *doneCounter) Stage(ingest.StageEvent) {}
func (d *doneCounter) Done(*ingest.Trace)      { d.n++ }

// TestInspectorRecorderTraces: the inspector's record form, which hands
// each run an observer of its own, still gets spans (and its observer
// still hears the run).
func TestInspectorRecorderTraces(t *testing.T) {
	e := &env{strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, func(string) string { return "" }}
	conf, err := resolvedFrom(map[string]string{"data": t.TempDir(), "otel.endpoint": "http://" + closedPort(t)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := openBackends(context.Background(), conf, e)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.tel == nil {
		t.Fatal("no telemetry with otel.endpoint set")
	}
	rec := tracedRecorder{ui.PipelineRecorder{Config: st.pipeline()}, st.tel}
	ev, err := model.Decode([]byte(strings.TrimSpace(demoLines(1))), decodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	obs := &doneCounter{}
	tr, err := rec.Record(context.Background(), ev, obs)
	if err != nil || tr.Outcome != ingest.OutcomeIngested {
		t.Fatalf("record: %v %+v", err, tr)
	}
	if obs.n != 1 {
		t.Errorf("the inspector's observer heard %d traces, want 1", obs.n)
	}
	if got := st.tel.Shutdown(context.Background()); got.Spans != 8 {
		t.Errorf("%d spans made for the recorded event, want 8", got.Spans)
	}
}
