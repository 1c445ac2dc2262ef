package systest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWorkerVsIngest: `engram worker` draining pre-produced events
// from a 6-partition raw topic into the embedded stores, against `engram
// ingest` of the same events from a file, side by side in interleaved
// rounds; then 1, 2 and 3 workers into S3 + OpenSearch against ingest into
// them. Reported: events/s of each and the ratio worker/ingest.
//
//	source .ci/services/.env && go test ./systest -run '^$' -bench WorkerVsIngest -benchtime 1x
//
// ENGRAM_BENCH_ROUNDS sets the embedded rounds (default 2; which of the two
// runs first alternates), reported each and as their median.
func BenchmarkWorkerVsIngest(b *testing.B) {
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_WORKER_EVENTS")); err == nil && v > 0 {
		n = v
	}
	brokers := os.Getenv("ENGRAM_TEST_KAFKA_BROKERS")
	if brokers == "" {
		b.Skip("set ENGRAM_TEST_KAFKA_BROKERS (source .ci/services/.env)")
	}
	bin := engramBinary(b)
	input := writeEvents(b, n, fmt.Sprintf("bw%d-", time.Now().UnixNano()))
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var ratios []float64
	for round := 1; round <= rounds; round++ {
		// Which runs first alternates: the disk's state after one run
		// (its dirty pages being written back) slows the next.
		var ing, wrk float64
		if round%2 == 1 {
			ing = timeIngest(b, bin, input, n, "--data", b.TempDir())
			wrk = timeWorkers(b, bin, brokers, input, n, 1, "--data", b.TempDir())
		} else {
			wrk = timeWorkers(b, bin, brokers, input, n, 1, "--data", b.TempDir())
			ing = timeIngest(b, bin, input, n, "--data", b.TempDir())
		}
		b.Logf("round %d, embedded, %d events: ingest %.0f/s, worker %.0f/s, ratio %.2f", round, n, ing, wrk, wrk/ing)
		b.ReportMetric(wrk/ing, fmt.Sprintf("ratio-embedded-r%d", round))
		ratios = append(ratios, wrk/ing)
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "ratio-embedded-median")
	if os.Getenv("ENGRAM_TEST_S3_ENDPOINT") == "" || os.Getenv("ENGRAM_TEST_OPENSEARCH_URL") == "" {
		return
	}
	ing := timeIngest(b, bin, input, n, serviceArgs(b)...)
	for workers := 1; workers <= 3; workers++ {
		wrk := timeWorkers(b, bin, brokers, input, n, workers, serviceArgs(b)...)
		b.Logf("S3 + OpenSearch, %d events: ingest %.0f/s, %d worker(s) %.0f/s, ratio %.2f", n, ing, workers, wrk, wrk/ing)
		b.ReportMetric(wrk/ing, fmt.Sprintf("ratio-services-%dw", workers))
	}
}

// timeIngest is the rate of `engram ingest FILE`.
func timeIngest(b *testing.B, bin, input string, n int, stores ...string) float64 {
	start := time.Now()
	if out, err := exec.Command(bin, append(append([]string{"ingest"}, stores...), input)...).CombinedOutput(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, tail(out))
	}
	return float64(n) / time.Since(start).Seconds()
}

// timeWorkers produces the events (not timed), then times workers from
// their start until they have ingested all of them.
func timeWorkers(b *testing.B, bin, brokers, input string, n, workers int, stores ...string) float64 {
	kargs, _ := kafkaArgs(b, brokers)
	runEngram(b, bin, append([]string{"kafka", "create-topics", "--partitions", "6"}, kargs...)...)
	runEngram(b, bin, append(append([]string{"produce"}, kargs...), input)...)
	args := append(append([]string{}, stores...), kargs...)
	start := time.Now()
	var firstAt time.Time
	var first int64
	var ws []*worker
	for range workers { // one at a time: the first makes the bucket
		w := startWorker(b, bin, b.TempDir(), args)
		waitUntil(b, time.Minute, "a worker to serve /health", w.healthy)
		ws = append(ws, w)
	}
	waitUntil(b, 10*time.Minute, "the workers to ingest every event", func() bool {
		var sum int64
		for _, w := range ws {
			sum += w.ingested()
		}
		if sum > 0 && firstAt.IsZero() {
			firstAt, first = time.Now(), sum
		}
		return sum >= int64(n)
	})
	elapsed := time.Since(start)
	steady := float64(int64(n)-first) / time.Since(firstAt).Seconds()
	b.Logf("%d worker(s): %.0f/s from start (process, group join), %.0f/s once consuming", workers, float64(n)/elapsed.Seconds(), steady)
	for _, w := range ws {
		w.cmd.Process.Signal(syscall.SIGTERM)
		w.cmd.Wait()
	}
	return float64(n) / elapsed.Seconds()
}
