package telemetry_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"engram/backend/telemetry"
	"engram/ingest"
	"engram/internal/fsfloor"
)

// BenchmarkIngestSpans ingests b.N events into embedded stores with spans
// off, exported, exported with StageSpans "main", exported to a collector
// that is down, and off again (the noise floor), in interleaved rounds
// whose order rotates, and reports each mode's slowdown against off. The
// modes and knobs are in BENCHMARKS.md, "Tracing: spans exported against
// off".
func BenchmarkIngestSpans(b *testing.B) {
	rounds := 10
	if n, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	endpoint := os.Getenv("ENGRAM_TEST_OTLP_ENDPOINT")
	if endpoint == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer srv.Close()
		endpoint = srv.URL
	}
	modes := []*benchMode{{name: "off"}, {name: "off2"},
		{name: "spans", tel: benchTelemetry(b, endpoint, "all")},
		{name: "main", tel: benchTelemetry(b, endpoint, "main")},
		{name: "down", tel: benchTelemetry(b, closedPort(b), "all")},
	}
	// One set of stores for every mode: on this file system, where a
	// directory's inodes land decides how fast files are created in it
	// (see the top of BENCHMARKS.md), so stores of their own gave each
	// mode a bias of its own, ±30%, that the off2 control exposed.
	st := newStores(b)
	for _, m := range modes {
		m.stores = st
	}
	run := fmt.Sprint(time.Now().UnixNano())
	per := (b.N + rounds - 1) / rounds
	b.ResetTimer()
	for r := 0; r*per < b.N; r++ {
		n := min(per, b.N-r*per)
		took := make([]time.Duration, len(modes))
		for k := range modes {
			i := (r + k) % len(modes)
			took[i] = modes[i].round(b, run, r, n)
		}
		for i, m := range modes {
			m.ratios = append(m.ratios, took[i].Seconds()/took[0].Seconds())
		}
	}
	b.StopTimer()
	for _, m := range modes {
		m.report(b)
	}
}

// benchMode is one way of running BenchmarkIngestSpans, and its totals.
type benchMode struct {
	name           string
	tel            *telemetry.Telemetry // nil: spans off
	stores         *stores
	took, cpu, col time.Duration
	ratios         []float64
}

func benchTelemetry(b *testing.B, endpoint, stageSpans string) *telemetry.Telemetry {
	tel, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: endpoint, ServiceName: "engram-bench",
		ArchiveBackend: "dir", IndexBackend: "sqlite", StageSpans: stageSpans})
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// closedPort is the URL of a port nothing listens on.
func closedPort(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

// round ingests n new events in mode m and returns the time it took; the
// flush after it is untimed, but the collector's CPU is counted up to its
// end.
func (m *benchMode) round(b *testing.B, run string, r, n int) time.Duration {
	items := make([]ingest.Item, n)
	for i := range items {
		items[i] = ingest.Item{Data: event(fmt.Sprintf("%s-%s-%d-%d", run, m.name, r, i), "")}
	}
	col0 := collectorCPU(b)
	start, cpu0 := time.Now(), cpuTime()
	traces := m.stores.run(b, m.tel.Observe(nil), items...)
	took, cpu := time.Since(start), cpuTime()-cpu0
	m.tel.Flush(context.Background())
	settle(b)
	m.took, m.cpu, m.col = m.took+took, m.cpu+cpu, m.col+collectorCPU(b)-col0
	for id, tr := range traces {
		if tr.Outcome != ingest.OutcomeIngested {
			b.Fatalf("%s: %v %v", id, tr.Outcome, tr.Err)
		}
	}
	return took
}

func (m *benchMode) report(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := m.tel.Shutdown(ctx)
	sort.Float64s(m.ratios)
	b.ReportMetric(float64(b.N)/m.took.Seconds(), m.name+"-events/s")
	b.ReportMetric(float64(m.cpu.Microseconds())/float64(b.N), m.name+"-cpu-µs/event")
	if m.name != "off" {
		b.ReportMetric(m.ratios[len(m.ratios)/2], m.name+"-slowdown")
	}
	if m.tel == nil {
		return
	}
	if os.Getenv("ENGRAM_BENCH_COLLECTOR_PID") != "" && m.name != "down" {
		b.ReportMetric(float64(m.col.Microseconds())/float64(b.N), m.name+"-collector-cpu-µs/event")
	}
	if m.name != "down" {
		b.ReportMetric(float64(st.Lost()), m.name+"-spans-lost")
	}
}

// cpuTime is the CPU (user and system) this process has used: with spans
// on it includes the exporter's, which runs beside the pipeline.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// collectorCPU is the CPU the collector's process (ENGRAM_BENCH_COLLECTOR_PID,
// e.g. Jaeger's) has used, -1 when not asked: on a machine it shares, its
// work on engram's spans is part of what they cost.
func collectorCPU(b *testing.B) time.Duration {
	return fsfloor.EnvProcCPU(b, "ENGRAM_BENCH_COLLECTOR_PID")
}

// settle waits (up to 2 s) until the collector's process is idle: it digests
// what it received after answering, and that work would otherwise land on
// the next round, another mode's (which made the mode after "spans" look
// 40% slower than "spans" itself).
func settle(b *testing.B) {
	if os.Getenv("ENGRAM_BENCH_COLLECTOR_PID") == "" {
		return
	}
	prev := collectorCPU(b)
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		cur := collectorCPU(b)
		if cur == prev {
			return
		}
		prev = cur
	}
}

// BenchmarkExportTrace is the CPU one event's spans cost, apart from the
// pipeline: making the eight spans of a real trace (b.N times) and
// exporting them over OTLP/HTTP to an in-process endpoint that discards
// them, flushed at the end so that export is inside the measure. On a
// machine too loaded for BenchmarkIngestSpans's wall-clock ratio to mean
// much, this over the pipeline's CPU per event is the overhead.
func BenchmarkExportTrace(b *testing.B) {
	for _, mode := range []string{"all", "main"} {
		b.Run(mode, func(b *testing.B) { benchExportTrace(b, mode) })
	}
}

func benchExportTrace(b *testing.B, stageSpans string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	tel, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: srv.URL, QueueSize: 1 << 20, StageSpans: stageSpans})
	if err != nil {
		b.Fatal(err)
	}
	tr := newStores(b).run(b, nil, ingest.Item{Data: event("x", "")})["x"]
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		tel.Export(tr)
	}
	tel.Flush(context.Background())
	cpu := cpuTime() - cpu0
	b.StopTimer()
	st := tel.Shutdown(context.Background())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
	b.ReportMetric(float64(st.Lost()), "spans-lost")
}
