package sqliteindex

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/internal/fsfloor"
	"engram/model"
	"engram/query"
	"engram/query/querytest"
	"engram/query/recall"
)

// stubEmbedder embeds as the benchmark corpus's documents were (the stub,
// 8 dimensions).
type stubEmbedder struct{}

func (stubEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = model.StubEmbedding(t, model.StubDimension)
	}
	return out, nil
}

// BenchmarkRecall measures a whole recall (embed the prompt, the newest
// 1,000 text matches of any of its words and the 40 nearest by
// embedding, their documents read, ranked) on the 1M-document index, and
// reports its latency percentiles (p50-ms, p99-ms) and those of the
// process's CPU time a recall took (cpu-p50-ms, cpu-p99-ms: the machine's
// load does not inflate them as it does the wall-clock time). Prompts are three
// words of the corpus's 11th to 200th most frequent.
func BenchmarkRecall(b *testing.B) {
	path := benchDB(b)
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	words := querytest.BenchWords[10:200]
	for _, c := range []struct {
		name, expr string
		emb        recall.Embedder
		window     int
	}{
		{"hybrid", "", stubEmbedder{}, 0},
		{"hybrid-filtered", "agent:agent-3", stubEmbedder{}, 0},
		{"text-only", "", nil, 0},
		{"hybrid-window-200", "", stubEmbedder{}, 200},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := &recall.Engine{Searcher: r, Embedder: c.emb, Window: c.window}
			rng := rand.New(rand.NewPCG(7, 7))
			var ds, cpu []time.Duration
			ctx := context.Background()
			for b.Loop() {
				prompt := strings.Join([]string{words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))]}, " ")
				start, c0 := time.Now(), fsfloor.CPUTime()
				_, res, _, err := e.Run(ctx, prompt, c.expr, nil, recall.DefaultSettings())
				if err != nil {
					b.Fatal(err)
				}
				if len(res) < 10 {
					b.Fatalf("%q: %d results", prompt, len(res))
				}
				ds, cpu = append(ds, time.Since(start)), append(cpu, fsfloor.CPUTime()-c0)
			}
			slices.Sort(ds)
			slices.Sort(cpu)
			ms := func(ds []time.Duration, q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
			b.ReportMetric(ms(ds, 0.50), "p50-ms")
			b.ReportMetric(ms(ds, 0.99), "p99-ms")
			b.ReportMetric(ms(cpu, 0.50), "cpu-p50-ms")
			b.ReportMetric(ms(cpu, 0.99), "cpu-p99-ms")
		})
	}
}
