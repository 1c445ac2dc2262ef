package systest

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/query/querytest"
)

// BenchmarkStatsBinary runs `engram stats --json` with the real binary over
// the embedded index of a million documents spread over 30 days, as a user
// types it, and reports the latency percentiles (p50-ms, p99-ms, process
// start included) and the process's CPU time (cpu-p50-ms, cpu-p99-ms):
// a day by hour split by agent (target p99 < 300 ms) and four weeks by day
// (target < 1 s), with and without a split and a filter.
func BenchmarkStatsBinary(b *testing.B) {
	data := b.TempDir()
	if err := os.Symlink(similarIndex(b), filepath.Join(data, "index.db")); err != nil {
		b.Fatal(err)
	}
	bin := engramBinary(b)
	rng := rand.New(rand.NewPCG(7, 7))
	t0 := querytest.BenchCorpusStart
	stats := func(since time.Time, span time.Duration, args ...string) []string {
		return append([]string{"stats", "--json", "--since", since.Format(time.RFC3339), "--until", since.Add(span).Format(time.RFC3339)}, args...)
	}
	day := func() time.Time { return t0.AddDate(0, 0, rng.IntN(28)) }
	answered := func(_ string, out []byte) error {
		if !strings.Contains(string(out), `"count":`) || strings.Contains(string(out), `"all":{"count":0,`) {
			return errors.New("no documents counted")
		}
		return nil
	}
	classes := []binaryClass{
		{"24h-by-hour-by-agent", func() []string { return stats(day(), 24*time.Hour, "--every", "1h", "--by", "agent") }},
		{"24h-by-hour-failed", func() []string { return stats(day(), 24*time.Hour, "--every", "1h", "success:false") }},
		{"28d-by-day", func() []string { return stats(t0, 28*24*time.Hour, "--every", "1d") }},
		{"28d-by-day-by-agent", func() []string { return stats(t0, 28*24*time.Hour, "--every", "1d", "--by", "agent") }},
		{"28d-by-day-by-outcome", func() []string { return stats(t0, 28*24*time.Hour, "--every", "1d", "--by", "outcome") }},
	}
	runBinaryClasses(b, bin, data, classes, answered)
}
