package systest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/query/querytest"
)

// BenchmarkQueryBinary runs the real binary's read commands, as a user
// types them, over the embedded index of a million documents
// (similarIndex: querytest.BenchCorpus: Zipf-distributed words, so the most frequent are
// in most documents), and reports each query class's latency percentiles
// (p50-ms, p99-ms), process start included, and the CPU time the process
// used (cpu-p50-ms, cpu-p99-ms: on a loaded machine the wall time is mostly
// waiting for a CPU). Each run of a class draws its words at random from
// the class's frequency ranks.
func BenchmarkQueryBinary(b *testing.B) {
	data := b.TempDir()
	if err := os.Symlink(similarIndex(b), filepath.Join(data, "index.db")); err != nil {
		b.Fatal(err)
	}
	bin := engramBinary(b)
	logFrequencies(b)
	rng := rand.New(rand.NewPCG(5, 5))
	w := querytest.BenchWords
	top := func() string { return w[rng.IntN(10)] }
	day := func() string {
		d := querytest.BenchCorpusStart.AddDate(0, 0, rng.IntN(30))
		return fmt.Sprintf("since:%s until:%s", d.Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly))
	}
	search := func(expr ...string) []string { return append([]string{"search", "--limit", "20"}, expr...) }
	classes := []binaryClass{
		{"search/top10", func() []string { return search(top()) }},
		{"search/rank10-200", func() []string { return search(w[10+rng.IntN(190)]) }},
		{"search/rank1000-2000", func() []string { return search(w[1000+rng.IntN(1000)]) }},
		{"search/two-top10", func() []string { return search(top(), top()) }},
		{"search/phrase-top10", func() []string { return search(`"` + top() + " " + top() + `"`) }},
		{"search/top10-agent", func() []string { return search(top(), fmt.Sprintf("agent:agent-%d", rng.IntN(20))) }},
		{"search/top10-type-failed", func() []string { return search(top(), "type:tool_result", "success:false") }},
		{"search/top10-day", func() []string { return search(top(), day()) }},
		{"search/filters-only", func() []string { return search(fmt.Sprintf("tenant:tenant-%d", rng.IntN(3)), "type:agent_action") }},
		// Not a target: what ranking every match costs, for contrast.
		{"search/top10-rank-all", func() []string { return search("--rank-window", "all", top()) }},
		{"similar", func() []string {
			return []string{"similar", "--limit", "10", querytest.BenchID(rng.IntN(querytest.BenchCorpusDocs))}
		}},
	}
	// Two classes may match nothing: their empty output is an answer.
	runBinaryClasses(b, bin, data, classes, func(name string, out []byte) error {
		if len(out) == 0 && name != "search/top10-type-failed" && name != "search/phrase-top10" {
			return errors.New("no output")
		}
		return nil
	})
}

// reportPercentiles reports the median and 99th percentile of ds in ms,
// as <prefix>p50-ms and <prefix>p99-ms.
func reportPercentiles(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
	b.ReportMetric(ms(0.50), prefix+"p50-ms")
	b.ReportMetric(ms(0.99), prefix+"p99-ms")
}

// logFrequencies logs in how many documents of the corpus the words of
// some frequency ranks are (counted from the generator: the index holds
// the same documents).
func logFrequencies(b *testing.B) {
	df := make(map[string]int)
	err := querytest.BenchCorpus(querytest.BenchCorpusDocs, func(docs []*model.IndexDoc) error {
		for _, d := range docs {
			seen := map[string]bool{}
			for _, word := range strings.Fields(d.Summary) {
				if !seen[word] {
					seen[word] = true
					df[word]++
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for _, rank := range []int{0, 1, 2, 4, 9, 10, 50, 199, 1000, 1999} {
		word := querytest.BenchWords[rank]
		parts = append(parts, fmt.Sprintf("#%d %s %.2f%%", rank+1, word, 100*float64(df[word])/querytest.BenchCorpusDocs))
	}
	b.Logf("documents holding the word of rank: %s", strings.Join(parts, ", "))
}

// binaryClass is one kind of command a binary benchmark runs, its
// arguments drawn anew each run.
type binaryClass struct {
	name string
	args func() []string
}

// runBinaryClasses runs each class's command against data as a
// sub-benchmark, checks its output (check nil: any output at all) and
// reports the wall time's and the process CPU time's percentiles (p50-ms,
// p99-ms, cpu-p50-ms, cpu-p99-ms).
func runBinaryClasses(b *testing.B, bin, data string, classes []binaryClass, check func(name string, out []byte) error) {
	for _, c := range classes {
		b.Run(c.name, func(b *testing.B) {
			var ds, cpu []time.Duration
			for b.Loop() {
				args := c.args()
				cmd := exec.Command(bin, append([]string{args[0], "--data", data}, args[1:]...)...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				start := time.Now()
				out, err := cmd.Output()
				ds = append(ds, time.Since(start))
				if cmd.ProcessState != nil {
					cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
				}
				if err == nil && check != nil {
					err = check(c.name, out)
				} else if err == nil && len(out) == 0 {
					err = fmt.Errorf("no output")
				}
				if err != nil {
					b.Fatalf("engram %s: %v: %.200s\n%s", strings.Join(args, " "), err, out, stderr.String())
				}
			}
			reportPercentiles(b, ds, "")
			reportPercentiles(b, cpu, "cpu-")
		})
	}
}
