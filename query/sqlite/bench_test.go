package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/ingest/sqlindex"
	"engram/model"
	"engram/query"
)

// The benchmark database: 1,000,000 documents in turns of four (plus some
// source-system shaped documents alone in their turn), 3 tenants, 20
// agents, 5,000 sessions, 10 tags, summaries of 8 to 14 words drawn from a
// Zipf distribution over 2,000 words, 8-dimensional embeddings, timestamps
// over 30 days. Built once into $TMPDIR and reused.
const (
	benchDocs    = 1_000_000
	benchVersion = "1" // change when the generator changes
)

func benchPath() string { return filepath.Join(os.TempDir(), "engram-bench-1m.db") }

// benchWords is the vocabulary: made-up words (no stop words, distinct
// stems).
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

// benchDoc is document i of the benchmark database.
func benchDoc(rng *rand.Rand, zipf *rand.Zipf, i int, start time.Time) *model.IndexDoc {
	ts := start.Add(time.Duration(i) * 2592 * time.Millisecond) // 30 days
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

// benchDB returns the path of the benchmark database, building it when
// missing.
func benchDB(b *testing.B) string {
	path := benchPath()
	marker := path + ".v" + benchVersion
	if _, err := os.Stat(marker); err == nil {
		if r, err := Open(path, query.Options{}); err == nil {
			n, err := r.Count(context.Background())
			r.Close()
			if err == nil && n == benchDocs {
				return path
			}
		}
	}
	b.Logf("building %s (%d documents, once)", path, benchDocs)
	start := time.Now()
	tmp := path + ".building"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", path, path + "-wal", path + "-shm", marker} {
		os.Remove(p)
	}
	db, err := sqlindex.Open(tmp, sqlindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(benchWords)-1))
	t0 := time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC)
	const batch = 10000
	for i := 0; i < benchDocs; i += batch {
		docs := make([]*model.IndexDoc, batch)
		for k := range docs {
			docs[k] = benchDoc(rng, zipf, i+k, t0)
		}
		for _, r := range db.Write(context.Background(), docs) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("built in %s", time.Since(start).Round(time.Second))
	return path
}

// BenchmarkReader measures each call on the 1M-document database and
// reports its latency percentiles (p50-ms, p99-ms).
func BenchmarkReader(b *testing.B) {
	path := benchDB(b)
	r, err := Open(path, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var maxSeq int64
	if err := r.q.QueryRow("SELECT max(seq) FROM docs").Scan(&maxSeq); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	// Query words: the 11th to 200th most frequent, in about 0.5% to 13% of
	// the summaries (the ten most frequent are left out, as stop words).
	words := benchWords[10:200]

	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := op(); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			slices.Sort(ds)
			ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
	want := func(n, at int, what string) error {
		if n < at {
			return fmt.Errorf("%s: %d results, want at least %d", what, n, at)
		}
		return nil
	}
	// A cursor to a random place, or the start; pages there hold at least
	// 50 documents (or turns).
	cursor := func() query.Cursor {
		if rng.IntN(2) == 0 {
			return ""
		}
		return seqCursor(1000 + rng.Int64N(maxSeq-1000))
	}

	run("Turn", func() error {
		docs, err := r.Turn(ctx, benchTurnKey(rng.IntN(benchDocs/4/10)*10+rng.IntN(9)))
		if err != nil {
			return err
		}
		return want(len(docs), 4, "Turn")
	})
	run("Recent", func() error {
		p, err := r.Recent(ctx, "", cursor(), 50)
		if err != nil {
			return err
		}
		return want(len(p.Docs), 50, "Recent")
	})
	run("RecentFiltered", func() error {
		_, err := r.Recent(ctx, fmt.Sprintf("tag:tag%d tenant:tenant-%d", rng.IntN(10), rng.IntN(3)), cursor(), 50)
		return err
	})
	run("Tail", func() error {
		_, err := r.Tail(ctx, seqCursor(maxSeq-rng.Int64N(20)), 100)
		return err
	})
	run("Document", func() error {
		_, err := r.Document(ctx, benchID(rng.IntN(benchDocs)))
		return err
	})
	run("Search", func() error {
		src := fmt.Sprintf("%s agent:agent-%d type:%s", words[rng.IntN(len(words))], rng.IntN(20),
			[]string{model.TypeAgentAction, model.TypeToolResult, model.TypeUserInput}[rng.IntN(3)])
		_, err := r.Search(ctx, src, "", 50)
		return err
	})
	run("SearchText", func() error {
		_, err := r.Search(ctx, words[rng.IntN(len(words))], "", 50)
		return err
	})
	run("Turns", func() error {
		p, err := r.Turns(ctx, "", cursor(), 50)
		if err != nil {
			return err
		}
		return want(len(p.Turns), 50, "Turns")
	})
	run("TurnsFiltered", func() error {
		_, err := r.Turns(ctx, fmt.Sprintf("tenant:tenant-%d success:false", rng.IntN(3)), cursor(), 50)
		return err
	})
	// An exact scan of every embedding: not a latency target, measured
	// to know it.
	run("Similar", func() error {
		res, err := r.Similar(ctx, benchID(rng.IntN(benchDocs)), 10)
		if err != nil {
			return err
		}
		return want(len(res), 10, "Similar")
	})
}
