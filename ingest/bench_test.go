package ingest_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"engram/ingest"
	"engram/internal/fsfloor"
)

// BenchmarkIngestVsFsync ingests b.N generated events into the embedded
// stores (durable: every archive file's contents flushed before it is
// linked, by fsync or by one syncfs shared by the writers waiting together,
// its directory entry fsynced before it is indexed, the index committed with
// synchronous=FULL) and, interleaved with it in rounds on the same machine,
// creates and fsyncs the same number of files of the same sizes with the
// same concurrency (the pipeline's default, 64 per CPU, unless
// ENGRAM_BENCH_WORKERS says otherwise). Rounds alternate so that the machine's
// drift (a shared, noisy disk) hits both alike; it reports both rates and
// the median of the per-round ratios.
func BenchmarkIngestVsFsync(b *testing.B) {
	const rounds = 5
	events := generate(b.N, fmt.Sprintf("bench-%d-", time.Now().UnixNano()))
	s := newStoresIn(b, fsfloor.Dir(b))
	cfg := s.config()
	if w := os.Getenv("ENGRAM_BENCH_WORKERS"); w != "" {
		if _, err := fmt.Sscan(w, &cfg.Workers); err != nil {
			b.Fatal(err)
		}
	}
	p, err := ingest.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var ratios []float64
	var ingestTime, rawTime, ingestCPU, rawCPU time.Duration
	per := (b.N + rounds - 1) / rounds
	b.ResetTimer()
	for r := 0; r*per < b.N; r++ {
		chunk := events[r*per : min((r+1)*per, b.N)]
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		sum := p.Run(context.Background(), feed(chunk...), nil)
		it, cpu1 := time.Since(start), fsfloor.CPUTime()
		if sum.Ingested != len(chunk) {
			b.Fatalf("summary %+v", sum)
		}
		rt := fsfloor.Create(b, nil, chunk, p.Workers())
		ingestTime, rawTime = ingestTime+it, rawTime+rt
		ingestCPU, rawCPU = ingestCPU+cpu1-cpu0, rawCPU+fsfloor.CPUTime()-cpu1
		ratios = append(ratios, rt.Seconds()/it.Seconds())
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(float64(b.N)/ingestTime.Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/rawTime.Seconds(), "rawfiles/s")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
	// CPU per file tells the machine's state: creating a file costs ~100µs
	// of CPU normally, but up to 1–2 ms for minutes after many files were
	// deleted on this file system (ext4 without a journal scans past every
	// recently deleted inode when it allocates one), and then both rates
	// are bounded by that scan.
	b.ReportMetric(float64(ingestCPU.Microseconds())/float64(b.N), "cpu-µs/event")
	b.ReportMetric(float64(rawCPU.Microseconds())/float64(b.N), "raw-cpu-µs/file")
}
