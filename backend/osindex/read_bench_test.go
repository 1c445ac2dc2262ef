package osindex

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
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

// benchReader opens the benchmark index, building it when missing or
// incomplete.
func benchReader(b *testing.B, opts query.Options) *Reader {
	u := osURL(b)
	ctx := context.Background()
	cfg := Config{URLs: []string{u}, Index: benchIndexName, Dimension: 8}
	ok := false
	if code, _ := admin(b, u, "HEAD", "/"+benchIndexName, ""); code == 200 {
		ix, err := Open(ctx, cfg)
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
		ix, err := Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(querytest.BenchWords)-1))
		t0 := time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC)
		for i := 0; i < benchDocs; i += benchBatch {
			docs := make([]*model.IndexDoc, benchBatch)
			for k := range docs {
				docs[k] = querytest.BenchDoc(rng, zipf, i+k, t0, 25920*time.Millisecond)
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
	ix, err := Open(ctx, cfg)
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
		key := querytest.BenchTurnKey(turn)
		if turn%10 == 9 {
			key = querytest.BenchID(turn * 4)
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
		_, err := r.Document(ctx, querytest.BenchID(rng.IntN(benchDocs)))
		return err
	})
}

func BenchmarkSearch(b *testing.B) {
	r := benchReader(b, query.Options{})
	ctx := context.Background()
	for _, src := range []string{querytest.BenchWords[3], querytest.BenchWords[1500] + " " + querytest.BenchWords[2], `"` + querytest.BenchWords[0] + " " + querytest.BenchWords[1] + `"`,
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
		_, err := r.Similar(ctx, querytest.BenchID(rng.IntN(benchDocs)), 10)
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
