package telemetry_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"engram/backend/telemetry"
	"engram/ingest"
)

// BenchmarkIngestSpans ingests b.N events into embedded stores twice, with
// spans off and with spans exported (to the Jaeger of
// ENGRAM_TEST_OTLP_ENDPOINT, else to an in-process OTLP endpoint that
// discards them), in alternating rounds (which goes first alternates too)
// so that the machine's drift hits both alike. The spans a round queued
// are flushed after it, untimed, so that their export does not slow the
// next round; during the round they are exported as in production, in the
// background beside the pipeline. It reports both rates, the median
// per-round slowdown (time with spans / time without) and the CPU per
// event of each.
func BenchmarkIngestSpans(b *testing.B) {
	const rounds = 10
	endpoint := os.Getenv("ENGRAM_TEST_OTLP_ENDPOINT")
	if endpoint == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer srv.Close()
		endpoint = srv.URL
	}
	tel, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: endpoint, ServiceName: "engram-bench",
		ArchiveBackend: "dir", IndexBackend: "sqlite"})
	if err != nil {
		b.Fatal(err)
	}
	storesOff, storesOn := newStores(b), newStores(b)
	run := fmt.Sprint(time.Now().UnixNano())
	per := (b.N + rounds - 1) / rounds
	var ratios []float64
	var offTime, onTime, offCPU, onCPU time.Duration
	round := func(s *stores, obs ingest.Observer, tag string, r, n int) (time.Duration, time.Duration) {
		items := make([]ingest.Item, n)
		for i := range items {
			items[i] = ingest.Item{Data: event(fmt.Sprintf("%s-%s-%d-%d", run, tag, r, i), "")}
		}
		start, cpu0 := time.Now(), cpuTime()
		traces := s.run(b, obs, items...)
		took, cpu := time.Since(start), cpuTime()-cpu0
		if obs != nil {
			tel.Flush(context.Background())
		}
		for id, tr := range traces {
			if tr.Outcome != ingest.OutcomeIngested {
				b.Fatalf("%s: %v %v", id, tr.Outcome, tr.Err)
			}
		}
		return took, cpu
	}
	b.ResetTimer()
	for r := 0; r*per < b.N; r++ {
		n := min(per, b.N-r*per)
		var ot, oc, nt, nc time.Duration
		if r%2 == 0 {
			ot, oc = round(storesOff, nil, "off", r, n)
			nt, nc = round(storesOn, tel.Observe(nil), "on", r, n)
		} else {
			nt, nc = round(storesOn, tel.Observe(nil), "on", r, n)
			ot, oc = round(storesOff, nil, "off", r, n)
		}
		offTime, onTime, offCPU, onCPU = offTime+ot, onTime+nt, offCPU+oc, onCPU+nc
		ratios = append(ratios, nt.Seconds()/ot.Seconds())
	}
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := tel.Shutdown(ctx)
	sort.Float64s(ratios)
	b.ReportMetric(float64(b.N)/offTime.Seconds(), "off-events/s")
	b.ReportMetric(float64(b.N)/onTime.Seconds(), "spans-events/s")
	b.ReportMetric(ratios[len(ratios)/2], "slowdown")
	b.ReportMetric(float64(offCPU.Microseconds())/float64(b.N), "off-cpu-µs/event")
	b.ReportMetric(float64(onCPU.Microseconds())/float64(b.N), "spans-cpu-µs/event")
	b.ReportMetric(float64(st.Lost()), "spans-lost")
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

// BenchmarkExportTrace is the CPU one event's spans cost, apart from the
// pipeline: making the eight spans of a real trace (b.N times) and
// exporting them over OTLP/HTTP to an in-process endpoint that discards
// them, flushed at the end so that export is inside the measure. On a
// machine too loaded for BenchmarkIngestSpans's wall-clock ratio to mean
// much, this over the pipeline's CPU per event is the overhead.
func BenchmarkExportTrace(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	tel, err := telemetry.New(context.Background(), telemetry.Config{Endpoint: srv.URL, QueueSize: 1 << 20})
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
