package systest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/backend/sqliteindex/sqlitetest"
	"engram/query/querytest"
)

// BenchmarkRecallBinary runs the real binary, process start included:
// engram recall --data D --limit 10 "PROMPT" [EXPR] on the
// million-document embedded index, prompts of three words of the corpus's
// 11th to 200th most frequent (0.5% to 13% of the documents each; as
// classes of their own, of the 10 most frequent, about 14% to 86%, and of
// the 201st to 2,000th, about 0.04% to 0.5%), and reports the wall-clock
// and CPU percentiles. The target is p99 < 150 ms. engram search (one
// word) and engram similar on the same index, in the same minutes, are the
// yardsticks: a recall runs both scans. The load average before and after
// is logged: on a shared machine it is what the wall-clock times depend on.
func BenchmarkRecallBinary(b *testing.B) {
	data := b.TempDir()
	if err := os.Symlink(sqlitetest.BenchIndex(b), filepath.Join(data, "index.db")); err != nil {
		b.Fatal(err)
	}
	bin := engramBinary(b)
	rng := rand.New(rand.NewPCG(9, 9))
	w := querytest.BenchWords
	prompt := func() string { return w[10+rng.IntN(190)] + " " + w[10+rng.IntN(190)] + " " + w[10+rng.IntN(190)] }
	recall := func(extra ...string) []string { return append([]string{"recall", "--limit", "10", prompt()}, extra...) }
	within := func(lo, hi int) func() []string {
		return func() []string {
			return []string{"recall", "--limit", "10", w[lo+rng.IntN(hi-lo)] + " " + w[lo+rng.IntN(hi-lo)] + " " + w[lo+rng.IntN(hi-lo)]}
		}
	}
	classes := []binaryClass{
		{"three-words", func() []string { return recall() }},
		{"three-common-words", within(0, 10)},
		{"three-rare-words", within(200, 2000)},
		{"three-words-agent", func() []string { return recall(fmt.Sprintf("agent:agent-%d", rng.IntN(20))) }},
		{"three-words-explain", func() []string {
			return recall("--explain", querytest.BenchID(rng.IntN(querytest.BenchCorpusDocs)))
		}},
		{"salience", func() []string { return recall("--formula", "salience") }},
		// The same minutes' yardsticks: the two scans a recall joins, alone.
		{"yardstick-search-one-word", func() []string { return []string{"search", "--limit", "20", w[10+rng.IntN(190)]} }},
		{"yardstick-similar", func() []string {
			return []string{"similar", "--limit", "10", querytest.BenchID(rng.IntN(querytest.BenchCorpusDocs))}
		}},
	}
	logLoad(b)
	runBinaryClasses(b, bin, data, classes, nil)
	logLoad(b)
}

func logLoad(b *testing.B) {
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average: %s", strings.TrimSpace(string(l)))
	}
}
