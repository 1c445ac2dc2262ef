package sqliteindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// The benchmark database: 1,000,000 documents in turns of four (plus some
// source-system shaped documents alone in their turn), 3 tenants, 20
// agents, 5,000 sessions, 10 tags, summaries of 8 to 14 words drawn from a
// Zipf distribution over 2,000 words, 8-dimensional embeddings, timestamps
// over 30 days. Built once into $TMPDIR and reused.
const (
	benchDocs    = querytest.BenchCorpusDocs
	benchVersion = "1" // change when the generator changes
)

func benchPath() string { return filepath.Join(os.TempDir(), "engram-bench-1m.db") }

// benchDB returns the path of the benchmark database, building it when
// missing.
func benchDB(b *testing.B) string {
	path := benchPath()
	marker := path + ".v" + benchVersion
	if _, err := os.Stat(marker); err == nil {
		if r, err := OpenReader(path, query.Options{}); err == nil {
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
	db, err := Open(tmp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	err = querytest.BenchCorpus(benchDocs, func(docs []*model.IndexDoc) error {
		for _, r := range db.Write(context.Background(), docs) {
			if r.Err != nil {
				return r.Err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
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
	r, err := OpenReader(path, query.Options{})
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
	t0 := querytest.BenchCorpusStart
	// Query words: the 11th to 200th most frequent, in about 0.5% to 13% of
	// the summaries (the ten most frequent are left out, as stop words).
	words := querytest.BenchWords[10:200]

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
		docs, err := r.Turn(ctx, querytest.BenchTurnKey(rng.IntN(benchDocs/4/10)*10+rng.IntN(9)))
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
		_, err := r.Document(ctx, querytest.BenchID(rng.IntN(benchDocs)))
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
	// The most frequent words: the first is in 86% of the summaries, the
	// tenth in 14% (BenchmarkQueryBinary in systest logs them all).
	common := querytest.BenchWords[:10]
	day := func() string {
		d := t0.AddDate(0, 0, rng.IntN(30))
		return fmt.Sprintf("since:%s until:%s", d.Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly))
	}
	run("SearchCommon", func() error {
		_, err := r.Search(ctx, common[rng.IntN(len(common))], "", 20)
		return err
	})
	run("SearchCommonPair", func() error {
		_, err := r.Search(ctx, common[rng.IntN(5)]+" "+common[5+rng.IntN(5)], "", 20)
		return err
	})
	run("SearchCommonFiltered", func() error {
		_, err := r.Search(ctx, fmt.Sprintf("%s agent:agent-%d", common[rng.IntN(len(common))], rng.IntN(20)), "", 20)
		return err
	})
	run("SearchCommonDay", func() error {
		_, err := r.Search(ctx, common[rng.IntN(len(common))]+" "+day(), "", 20)
		return err
	})
	// The inspector's filter bar: the first page, newest first.
	run("RecentCommon", func() error {
		_, err := r.Recent(ctx, common[rng.IntN(len(common))], "", 50)
		return err
	})
	run("RecentCommonDay", func() error {
		_, err := r.Recent(ctx, common[rng.IntN(len(common))]+" "+day(), "", 50)
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
		res, err := r.Similar(ctx, querytest.BenchID(rng.IntN(benchDocs)), 10)
		if err != nil {
			return err
		}
		return want(len(res), 10, "Similar")
	})
}
