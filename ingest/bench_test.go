package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"engram/ingest"
)

// BenchmarkIngestVsFsync ingests b.N generated events into the embedded
// stores (durable: every archive file and directory entry fsynced, the index
// committed with synchronous=FULL), then, in the same run, creates and
// fsyncs b.N files of the same sizes with the same concurrency. It reports
// both rates and their ratio, the figure the target is stated in.
func BenchmarkIngestVsFsync(b *testing.B) {
	events := generate(b.N, fmt.Sprintf("bench-%d-", time.Now().UnixNano()))
	s := newStores(b)
	cfg := s.config()
	if w := os.Getenv("ENGRAM_BENCH_WORKERS"); w != "" {
		fmt.Sscan(w, &cfg.Workers)
	}
	p, err := ingest.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	sum := p.Run(context.Background(), feed(events...), nil)
	ingestRate := float64(b.N) / time.Since(start).Seconds()
	b.StopTimer()
	if sum.Ingested != b.N {
		b.Fatalf("summary %+v", sum)
	}
	raw := rawFsyncRate(b, events, max(cfg.Workers, 4*workers()))
	b.ReportMetric(ingestRate, "events/s")
	b.ReportMetric(raw, "rawfiles/s")
	b.ReportMetric(ingestRate/raw, "ratio")
}

// workers is the pipeline's default concurrency, used for the raw writers too.
func workers() int { return runtime.NumCPU() }

// rawFsyncRate creates and fsyncs one file per body with n writers, all in
// one directory as the archive puts one day's events in one.
func rawFsyncRate(b *testing.B, bodies [][]byte, n int) float64 {
	dir := b.TempDir()
	ch := make(chan int, len(bodies))
	for i := range bodies {
		ch <- i
	}
	close(ch)
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.json", i)))
				if err != nil {
					b.Error(err)
					return
				}
				f.Write(bodies[i])
				f.Sync()
				f.Close()
			}
		}()
	}
	wg.Wait()
	return float64(len(bodies)) / time.Since(start).Seconds()
}
