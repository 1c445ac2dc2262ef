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

	"engram/internal/fsfloor"
)

// BenchmarkWorkerVsIngest: `engram worker` draining pre-produced events
// against `engram ingest` of the same events, in interleaved rounds, into
// the embedded stores and into S3 + OpenSearch. What it reports and its
// knobs are in BENCHMARKS.md, "Kafka: engram worker against engram ingest".
func BenchmarkWorkerVsIngest(b *testing.B) {
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_WORKER_EVENTS")); err == nil && v > 0 {
		n = v
	}
	brokers := os.Getenv("ENGRAM_TEST_KAFKA_BROKERS")
	if brokers == "" {
		b.Skip("set ENGRAM_TEST_KAFKA_BROKERS (source .ci/services/.env)")
	}
	bin := benchBinary(b)
	input := writeEvents(b, n, fmt.Sprintf("bw%d-", time.Now().UnixNano()))
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var ratios, steady, alike []float64
	for round := 1; round <= rounds; round++ {
		// Which runs first rotates: the disk's state after one run (its
		// dirty pages being written back) slows the next.
		// The data directories are fsfloor.Dir's: kept under
		// ENGRAM_BENCH_DIR, so that deleting one run's hundreds of thousands of files
		// does not slow the next run's file creation (see BENCHMARKS.md).
		var ing, wrk, ingk drain
		runs := []func(){
			func() { ing = timeIngest(b, bin, input, n, "--data", fsfloor.Dir(b)) },
			func() { wrk = timeWorkers(b, bin, brokers, input, n, 1, "--data", fsfloor.Dir(b)) },
			func() { ingk = timeIngestKafka(b, bin, brokers, input, n, "--data", fsfloor.Dir(b)) },
		}
		for i := range runs {
			runs[(i+round-1)%len(runs)]()
		}
		b.Logf("round %d, embedded, %d events: ingest %.0f/s, worker %.0f/s (%.0f/s once consuming), ratio %.2f (%.2f); "+
			"ingest notifying on Kafka %.0f/s, worker/that %.2f; CPU µs/event: ingest %.0f, ingest on Kafka %.0f, worker %.0f, broker %.0f beside the worker", round, n,
			ing.rate, wrk.rate, wrk.steady, wrk.rate/ing.rate, wrk.steady/ing.rate, ingk.rate, wrk.rate/ingk.rate, ing.cpu, ingk.cpu, wrk.cpu, wrk.broker)
		b.ReportMetric(wrk.rate/ing.rate, fmt.Sprintf("ratio-embedded-r%d", round))
		ratios = append(ratios, wrk.rate/ing.rate)
		steady = append(steady, wrk.steady/ing.rate)
		alike = append(alike, wrk.rate/ingk.rate)
	}
	b.ReportMetric(median(ratios), "ratio-embedded-median")
	b.ReportMetric(median(steady), "ratio-consuming-median")
	b.ReportMetric(median(alike), "ratio-vs-ingest-kafka-median")
	if os.Getenv("ENGRAM_TEST_S3_ENDPOINT") == "" || os.Getenv("ENGRAM_TEST_OPENSEARCH_URL") == "" {
		return
	}
	ing := timeIngest(b, bin, input, n, serviceArgs(b)...)
	for workers := 1; workers <= 3; workers++ {
		wrk := timeWorkers(b, bin, brokers, input, n, workers, serviceArgs(b)...)
		b.Logf("S3 + OpenSearch, %d events: ingest %.0f/s, %d worker(s) %.0f/s, ratio %.2f", n, ing.rate, workers, wrk.rate, wrk.rate/ing.rate)
		b.ReportMetric(wrk.rate/ing.rate, fmt.Sprintf("ratio-services-%dw", workers))
	}
}

// median of xs (of an even count, the mean of the middle two: the upper
// one alone read above the target when the rounds straddled it).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// drain is how one run went: its rate from the start of the processes,
// the workers' rate once they consume (their start-up and group join
// left out), and CPU per event of engram's processes and, beside workers,
// of the broker (ENGRAM_BENCH_BROKER_PID; -1 without it).
type drain struct {
	rate, steady float64
	cpu, broker  float64
}

// timeIngest runs `engram ingest FILE`.
func timeIngest(b *testing.B, bin, input string, n int, stores ...string) drain {
	cmd := exec.Command(bin, append(append([]string{"ingest"}, stores...), input)...)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, tail(out))
	}
	rate := float64(n) / time.Since(start).Seconds()
	return drain{rate: rate, steady: rate, cpu: perEvent(childCPU(cmd), n), broker: -1}
}

// timeIngestKafka runs `engram ingest FILE` with its notifications on
// Kafka, as the workers': what is left between the two is consuming.
func timeIngestKafka(b *testing.B, bin, brokers, input string, n int, stores ...string) drain {
	kargs := benchKafkaArgs(b, bin, brokers)
	return timeIngest(b, bin, input, n, append(stores, kargs...)...)
}

// benchKafkaArgs creates a fresh set of topics and returns the flags that
// name them (and the benchmark's codec).
func benchKafkaArgs(b *testing.B, bin, brokers string) []string {
	kargs, _ := kafkaArgs(b, brokers)
	if c := os.Getenv("ENGRAM_BENCH_KAFKA_COMPRESSION"); c != "" {
		kargs = append(kargs, "--kafka-compression", c) // for produce and the workers alike
	}
	runEngram(b, bin, append([]string{"kafka", "create-topics", "--partitions", "6"}, kargs...)...)
	return kargs
}

func childCPU(cmd *exec.Cmd) time.Duration {
	return fsfloor.RusageCPU(cmd.ProcessState.SysUsage().(*syscall.Rusage))
}

func perEvent(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }

// brokerCPU is the broker's CPU so far, -1 when ENGRAM_BENCH_BROKER_PID is
// not set.
func brokerCPU(b *testing.B) time.Duration {
	return fsfloor.EnvProcCPU(b, "ENGRAM_BENCH_BROKER_PID")
}

// timeWorkers produces the events (not timed), then times workers from
// their start until they have ingested all of them.
func timeWorkers(b *testing.B, bin, brokers, input string, n, workers int, stores ...string) drain {
	kargs := benchKafkaArgs(b, bin, brokers)
	runEngram(b, bin, append(append([]string{"produce"}, kargs...), input)...)
	args := append(append([]string{}, stores...), kargs...)
	broker0 := brokerCPU(b)
	start := time.Now()
	var firstAt time.Time
	var first int64
	var ws []*worker
	for range workers { // one at a time: the first makes the bucket
		w := startWorker(b, bin, fsfloor.Dir(b), args)
		waitUntil(b, time.Minute, "a worker to serve /health", w.healthy)
		ws = append(ws, w)
	}
	// Asked every 20 ms: ingest's end is its exit, to the microsecond, and
	// at waitUntil's 250 ms the workers' end read 125 ms late on average
	// (2-3% of a 50,000-event drain).
	pollUntil(b, 10*time.Minute, 20*time.Millisecond, "the workers to ingest every event", func() bool {
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
	d := drain{rate: float64(n) / elapsed.Seconds(), steady: float64(int64(n)-first) / time.Since(firstAt).Seconds(), broker: -1}
	if broker0 >= 0 {
		d.broker = perEvent(brokerCPU(b)-broker0, n)
	}
	var cpu time.Duration
	for _, w := range ws {
		w.cmd.Process.Signal(syscall.SIGTERM)
		_ = w.cmd.Wait() // the exit status of a worker told to stop is not measured
		cpu += childCPU(w.cmd)
	}
	d.cpu = perEvent(cpu, n)
	return d
}
