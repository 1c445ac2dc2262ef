package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"engram/ingest"
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
	s := newStoresIn(b, benchDir(b))
	cfg := s.config()
	if w := os.Getenv("ENGRAM_BENCH_WORKERS"); w != "" {
		fmt.Sscan(w, &cfg.Workers)
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
		start, cpu0 := time.Now(), cpuTime()
		sum := p.Run(context.Background(), feed(chunk...), nil)
		it, cpu1 := time.Since(start), cpuTime()
		if sum.Ingested != len(chunk) {
			b.Fatalf("summary %+v", sum)
		}
		rt := rawFsync(b, chunk, p.Workers())
		ingestTime, rawTime = ingestTime+it, rawTime+rt
		ingestCPU, rawCPU = ingestCPU+cpu1-cpu0, rawCPU+cpuTime()-cpu1
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

// benchDir is a new directory for a benchmark's files: under
// $ENGRAM_BENCH_DIR, kept after the run, when that is set (deleting tens of
// thousands of files makes every file created on this machine's file system
// cost 10× more CPU for the next minutes, which would slow the next run:
// remove the directory when done measuring), else a test temporary
// directory.
func benchDir(b *testing.B) string {
	root := os.Getenv("ENGRAM_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, "bench-")
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// cpuTime is the CPU (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawFsync creates and fsyncs one file per body with n writers, all in
// one directory as the archive puts one day's events in one, and returns
// how long it took.
func rawFsync(b *testing.B, bodies [][]byte, n int) time.Duration {
	dir := benchDir(b)
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
	return time.Since(start)
}
