package systest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"engram/ingest/gen"
	"engram/internal/fsfloor"
	"engram/model"
)

// BenchmarkIngestBinaryVsFsync measures the real binary as users run it
// (`engram ingest FILE --data DIR`) against the raw fsync floor of the same
// machine, in interleaved rounds: the ingest benchmark that counts. What it
// reports and its knobs (ENGRAM_BENCH_ROUNDS, _BIN, _LOAD, _DIR) are in
// BENCHMARKS.md, "Ingest: the real binary against the raw fsync floor".
// Run it with -benchtime 30000x.
func BenchmarkIngestBinaryVsFsync(b *testing.B) {
	for _, days := range []int{28, 1} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) { benchBinaryVsFsync(b, days) })
	}
}

func benchBinaryVsFsync(b *testing.B, days int) {
	rounds := benchRounds()
	bin := benchBinary(b)
	dir := fsfloor.Dir(b)
	data := filepath.Join(dir, "data")
	per := (b.N + rounds - 1) / rounds
	v := vsFloor{workers: map[int]int{}}
	var faults int64
	load := startLoad(b)
	b.ResetTimer()
	for r := 0; v.events < b.N; r++ {
		n := min(per, b.N-v.events)
		input, keys := daysInput(b, dir, r, n, days)
		el, cpu, flt := runIngest(b, bin, data, input, n)
		faults += flt
		v.add(n, el, cpu, fsfloor.Best(b, keys, archived(b, data, keys), 8, 32, 128))
		v.busy += load.probe(time.Second)
	}
	b.StopTimer()
	v.report(b, "bin-cores", load)
	b.ReportMetric(float64(faults)/float64(v.events), "faults/event")
}

// daysInput writes n new events, spread over days consecutive days, to a
// JSONL file and returns it with each event's archive key.
func daysInput(b *testing.B, dir string, round, n, days int) (string, []string) {
	gens := make([]*gen.Generator, days)
	start := time.Date(2026, 3, 1, 0, 0, 1, 0, time.UTC)
	for d := range gens {
		gens[d] = gen.New(gen.Config{Seed: uint64(round*100 + d), Start: start.AddDate(0, 0, d),
			Prefix: fmt.Sprintf("b%d-r%d-d%d-", time.Now().UnixNano(), round, d)})
	}
	path := filepath.Join(dir, fmt.Sprintf("input-%d.jsonl", round))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	keys := make([]string, 0, n)
	for d := 0; len(keys) < n; d = (d + 1) % days {
		for _, ev := range gens[d].Turn() {
			if len(keys) == n {
				break
			}
			keys = append(keys, archiveKey(b, ev))
			if _, err := w.Write(ev); err != nil {
				b.Fatal(err)
			}
			if err := w.WriteByte('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Synced, so that the first flush of the side that reads it does not
	// write it back: the floor, which does not read it, would not pay that.
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		b.Fatal(err)
	}
	return path, keys
}

// benchRounds is ENGRAM_BENCH_ROUNDS, the rounds a benchmark against the
// floor runs (default 4; at least 1).
func benchRounds() int {
	rounds := 4
	if v := os.Getenv("ENGRAM_BENCH_ROUNDS"); v != "" {
		_, _ = fmt.Sscan(v, &rounds)
	}
	return max(rounds, 1)
}

// vsFloor sums the rounds of a benchmark against the raw floor.
type vsFloor struct {
	events                           int
	elapsed, rawElapsed, cpu, rawCPU time.Duration
	ratios                           []float64   // the floor's time over the measured side's, a round each
	workers                          map[int]int // rounds the floor was fastest at each concurrency
	busy                             float64     // cores the CPU-bound control got, summed over rounds
}

// add counts a round of n events that took el and cpu, and the floor's
// round of as many files.
func (v *vsFloor) add(n int, el, cpu time.Duration, floor fsfloor.Result) {
	v.events += n
	v.elapsed, v.rawElapsed = v.elapsed+el, v.rawElapsed+floor.Elapsed
	v.cpu, v.rawCPU = v.cpu+cpu, v.rawCPU+floor.CPUPerFile*time.Duration(n)
	v.ratios = append(v.ratios, floor.Elapsed.Seconds()/el.Seconds())
	v.workers[floor.Workers]++
}

// report stops the load and reports both rates, the median round ratio
// (of an even count, the higher of the middle two), the CPU each side spent
// on an event or file and their ratio, and the cores each kept busy while
// it ran (the measured side's as the metric coresUnit), beside the cores
// the load and the CPU-bound control got: beside a load, the share the
// scheduler gave each side decides its rate as much as its CPU per event
// does (BENCHMARKS.md, "Ingest: the real binary against the raw fsync
// floor").
func (v *vsFloor) report(b *testing.B, coresUnit string, load *cpuLoad) {
	if v.busy > 0 {
		b.ReportMetric(v.busy/float64(len(v.ratios)), "busy-cores")
	}
	load.report(b)
	sort.Float64s(v.ratios)
	b.ReportMetric(float64(v.events)/v.elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(v.events)/v.rawElapsed.Seconds(), "rawfiles/s")
	b.ReportMetric(v.ratios[len(v.ratios)/2], "ratio")
	b.ReportMetric(float64(v.cpu.Microseconds())/float64(v.events), "cpu-µs/event")
	b.ReportMetric(float64(v.rawCPU.Microseconds())/float64(v.events), "raw-cpu-µs/file")
	b.ReportMetric(v.cpu.Seconds()/v.elapsed.Seconds(), coresUnit)
	b.ReportMetric(v.rawCPU.Seconds()/v.rawElapsed.Seconds(), "raw-cores")
	b.ReportMetric(float64(v.cpu)/float64(v.rawCPU), "cpu-ratio")
	b.Logf("%d events in %d rounds; the floor was fastest at %v writers (rounds per concurrency)", v.events, len(v.ratios), v.workers)
}

func archiveKey(b *testing.B, ev []byte) string {
	var e struct {
		EventID   string `json:"eventId"`
		Timestamp string `json:"timestamp"`
	}
	if err := json.Unmarshal(ev, &e); err != nil {
		b.Fatal(err)
	}
	k, err := model.ArchiveKey(e.EventID, e.Timestamp)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// runIngest runs the binary on input and returns its wall time, its CPU and
// its minor page faults: each a fresh page of memory, whose cost swings
// with the host (see BENCHMARKS.md, "clear_page").
func runIngest(b *testing.B, bin, data, input string, n int) (time.Duration, time.Duration, int64) {
	cmd := exec.Command(bin, "ingest", "--data", data, input)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, tail([]byte(out.String())))
	}
	el := time.Since(start)
	if !strings.Contains(out.String(), fmt.Sprintf("ingested %d,", n)) {
		b.Fatalf("summary: %s", tail([]byte(out.String())))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return el, fsfloor.RusageCPU(ru), ru.Minflt
}

// archived reads back what the binary archived under keys: the floor
// writes the same bytes.
func archived(b *testing.B, data string, keys []string) [][]byte {
	bodies := make([][]byte, len(keys))
	for i, k := range keys {
		body, err := os.ReadFile(filepath.Join(data, "archive", filepath.FromSlash(k)))
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = body
	}
	return bodies
}
