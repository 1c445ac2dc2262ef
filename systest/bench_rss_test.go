package systest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/ingest/gen"
	"engram/internal/fsfloor"
)

// BenchmarkIngestMillionRSS ingests a JSONL file of ENGRAM_BENCH_EVENTS
// events (default 1,000,000) with the real binary into the embedded stores
// and reports the peak resident set (VmHWM) and the rate. One iteration is
// the whole file: run with -benchtime=1x. ENGRAM_BENCH_BIN=PATH measures
// another build of engram.
func BenchmarkIngestMillionRSS(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("ENGRAM_BENCH_EVENTS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			b.Fatal(err)
		}
	}
	dir := fsfloor.Dir(b)
	path := filepath.Join(dir, "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := gen.New(gen.Config{Seed: 99, Prefix: fmt.Sprintf("m%d-", time.Now().UnixNano())})
	for range n {
		if _, err := w.Write(g.Next()); err != nil {
			b.Fatal(err)
		}
		if err := w.WriteByte('\n'); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	f.Close()
	bin := benchBinary(b)
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(bin, "ingest", "--data", filepath.Join(dir, fmt.Sprint(time.Now().UnixNano())), path)
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		peak := watchPeakRSS(cmd.Process.Pid)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("ingest: %v\n%s", err, tail([]byte(out.String())))
		}
		elapsed := time.Since(start)
		if !strings.Contains(out.String(), fmt.Sprintf("ingested %d,", n)) {
			b.Fatalf("summary: %s", tail([]byte(out.String())))
		}
		b.ReportMetric(float64(<-peak)/(1<<20), "peakRSS-MB")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	}
}
