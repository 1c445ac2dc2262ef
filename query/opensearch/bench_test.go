package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/ingest/osindex"
	"engram/model"
	"engram/query"
)

// The benchmark index: 100,000 documents in turns of four (every tenth
// turn a single source-system shaped document without extension fields),
// 3 tenants, 20 agents, 5,000 sessions, 10 tags, summaries of 8 to 14
// words drawn from a Zipf distribution over 2,000 words, 8-dimensional
// embeddings, timestamps over 30 days. Built once through osindex, in
// Write calls of 500 documents as the pipeline sends them (each call
// stamps its own ingested_at), into benchIndexName and reused while its
// mapping's _meta has benchVersion and it holds benchDocs documents.
const (
	benchDocs      = 100_000
	benchIndexName = "engram-bench-100k"
	benchVersion   = "2" // change when the generator changes
	benchBatch     = 500
)

var benchWords = func() []string {
	cons, vows := "bdfgklmnprstvz", "aeiou"
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	var out []string
	for len(out) < 2000 {
		var b strings.Builder
		for range 3 {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		b.WriteByte(cons[rng.IntN(len(cons))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

func benchTurnKey(i int) string { return fmt.Sprintf("bt-%06d", i) }
func benchID(i int) string      { return fmt.Sprintf("b-%07d", i) }

func benchDoc(rng *rand.Rand, zipf *rand.Zipf, i int, start time.Time) *model.IndexDoc {
	ts := start.Add(time.Duration(i) * 25920 * time.Millisecond) // 30 days
	words := make([]string, 8+rng.IntN(7))
	for k := range words {
		words[k] = benchWords[zipf.Uint64()]
	}
	emb := make([]float64, 8)
	for k := range emb {
		emb[k] = math.Round((rng.Float64()*2-1)*1000) / 1000
	}
	var tags []string
	for k := range 10 {
		if rng.IntN(5) == 0 {
			tags = append(tags, fmt.Sprintf("tag%d", k))
		}
	}
	if tags == nil {
		tags = []string{}
	}
	turn := i / 4
	d := &model.IndexDoc{
		EventID:          benchID(i),
		Timestamp:        ts.Format(time.RFC3339Nano),
		SessionID:        fmt.Sprintf("sess-%04d", turn%5000),
		AgentID:          fmt.Sprintf("agent-%d", turn%20),
		Summary:          strings.Join(words, " "),
		Embedding:        emb,
		Structured:       json.RawMessage(`{}`),
		ImportanceScore:  math.Round(rng.Float64()*1000) / 1000,
		RewardScore:      math.Round(rng.Float64()*100) / 100,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: model.ArchivePrefix(ts) + benchID(i) + ".json",
		Tags:             tags,
	}
	if turn%10 == 9 { // source-system shaped, alone in its turn
		d.EventType = model.TypeUserInput
		return d
	}
	d.TurnID = benchTurnKey(turn)
	d.TenantID = fmt.Sprintf("tenant-%d", turn%3)
	switch i % 4 {
	case 0:
		d.EventType = model.TypeUserInput
	case 1, 2:
		d.EventType = model.TypeAgentAction
		d.Tool = []string{"search", "web search", "calculator"}[rng.IntN(3)]
		lat := int64(rng.IntN(2000))
		d.LatencyMs = &lat
	case 3:
		d.EventType = model.TypeToolResult
		ok := rng.IntN(5) != 0
		d.Success = &ok
	}
	return d
}

// benchReader opens the benchmark index, building it when missing or
// incomplete.
func benchReader(b *testing.B, opts query.Options) *Reader {
	u := osURL(b)
	ctx := context.Background()
	cfg := osindex.Config{URLs: []string{u}, Index: benchIndexName, Dimension: 8}
	ok := false
	if code, _ := admin(b, u, "HEAD", "/"+benchIndexName, ""); code == 200 {
		ix, err := osindex.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		r := newReader(b, ix, opts)
		n, err := r.Count(ctx)
		_, meta := admin(b, u, "GET", "/"+benchIndexName+"/_mapping?filter_path=**._meta", "")
		ok = err == nil && n == benchDocs && strings.Contains(string(meta), `"engram_bench":"`+benchVersion+`"`)
		ix.Close()
	}
	if !ok {
		b.Logf("building %s (%d documents, once)", benchIndexName, benchDocs)
		start := time.Now()
		admin(b, u, "DELETE", "/"+benchIndexName, "")
		ix, err := osindex.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(benchWords)-1))
		t0 := time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC)
		for i := 0; i < benchDocs; i += benchBatch {
			docs := make([]*model.IndexDoc, benchBatch)
			for k := range docs {
				docs[k] = benchDoc(rng, zipf, i+k, t0)
			}
			writeDocs(b, ix, docs)
		}
		if err := ix.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		mustAdmin(b, u, "PUT", "/"+benchIndexName+"/_mapping", `{"_meta":{"engram_bench":"`+benchVersion+`"}}`)
		ix.Close()
		b.Logf("built in %v", time.Since(start).Round(time.Second))
	}
	ix, err := osindex.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return newReader(b, ix, opts)
}

// measure runs op b.N times and reports the p50 and p99 latency.
func measure(b *testing.B, op func(i int) error) {
	b.Helper()
	for i := range 5 { // warm up
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func BenchmarkTurn(b *testing.B) {
	r := benchReader(b, query.Options{})
	rng := rand.New(rand.NewPCG(3, 3))
	ctx := context.Background()
	measure(b, func(int) error {
		turn := rng.IntN(benchDocs / 4)
		key := benchTurnKey(turn)
		if turn%10 == 9 {
			key = benchID(turn * 4)
		}
		docs, err := r.Turn(ctx, key)
		if err == nil && len(docs) == 0 {
			err = fmt.Errorf("turn %s: no documents", key)
		}
		return err
	})
}

func BenchmarkRecent(b *testing.B) {
	r := benchReader(b, query.Options{})
	ctx := context.Background()
	for _, src := range []string{"", "tag:tag3 agent:agent-7"} {
		b.Run(fmt.Sprintf("%q", src), func(b *testing.B) {
			var next query.Cursor
			measure(b, func(int) error {
				p, err := r.Recent(ctx, src, next, 50)
				next = p.Next // page on, then start again
				return err
			})
		})
	}
}

func BenchmarkTail(b *testing.B) {
	r := benchReader(b, query.Options{})
	ctx := context.Background()
	start, err := r.TailStart(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("poll", func(b *testing.B) {
		measure(b, func(int) error { _, err := r.Tail(ctx, start, 500); return err })
	})
	b.Run("start", func(b *testing.B) {
		measure(b, func(int) error { _, err := r.TailStart(ctx); return err })
	})
	b.Run("catch-up", func(b *testing.B) { // pages of 500 from the start of the index
		var cur query.Cursor
		measure(b, func(int) error {
			p, err := r.Tail(ctx, cur, 500)
			cur = p.Next
			if len(p.Docs) == 0 {
				cur = ""
			}
			return err
		})
	})
}

func BenchmarkDocument(b *testing.B) {
	r := benchReader(b, query.Options{})
	rng := rand.New(rand.NewPCG(4, 4))
	ctx := context.Background()
	measure(b, func(int) error {
		_, err := r.Document(ctx, benchID(rng.IntN(benchDocs)))
		return err
	})
}

func BenchmarkSearch(b *testing.B) {
	r := benchReader(b, query.Options{})
	ctx := context.Background()
	for _, src := range []string{benchWords[3], benchWords[1500] + " " + benchWords[2], `"` + benchWords[0] + " " + benchWords[1] + `"`,
		"agent:agent-3 tag:tag1 success:false", "importance>=0.9 since:10d"} {
		b.Run(fmt.Sprintf("%q", src), func(b *testing.B) {
			measure(b, func(int) error { _, err := r.Search(ctx, src, "", 20); return err })
		})
	}
}

func BenchmarkTurns(b *testing.B) {
	r := benchReader(b, query.Options{})
	ctx := context.Background()
	for _, src := range []string{"", "success:false", "agent:agent-3"} {
		b.Run(fmt.Sprintf("%q", src), func(b *testing.B) {
			var next query.Cursor
			measure(b, func(int) error {
				p, err := r.Turns(ctx, src, next, 50)
				next = p.Next
				return err
			})
		})
	}
}

func BenchmarkSimilar(b *testing.B) {
	r := benchReader(b, query.Options{})
	rng := rand.New(rand.NewPCG(5, 5))
	ctx := context.Background()
	measure(b, func(int) error {
		_, err := r.Similar(ctx, benchID(rng.IntN(benchDocs)), 10)
		return err
	})
}

func BenchmarkTenantTurns(b *testing.B) {
	r := benchReader(b, query.Options{Tenant: "tenant-1"})
	ctx := context.Background()
	var next query.Cursor
	measure(b, func(int) error {
		p, err := r.Turns(ctx, "", next, 50)
		next = p.Next
		return err
	})
}
