package sqliteindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// similarBenchDB is benchDB copied and upgraded by Open to schemaVersion
// (vec_blocks built from docs), kept in $TMPDIR beside it: benchDB itself is
// left at whatever version built it.
func similarBenchDB(b *testing.B) string {
	src := benchDB(b)
	dst := filepath.Join(os.TempDir(), "engram-bench-1m-similar.db")
	marker := dst + ".v" + benchVersion
	if _, err := os.Stat(marker); err == nil {
		return dst
	}
	if st, err := os.Stat(src + "-wal"); err == nil && st.Size() > 0 {
		b.Fatalf("%s-wal holds writes: close its writer first", src)
	}
	tmp := dst + ".building"
	copyFile(b, src, tmp)
	start := time.Now()
	db, err := Open(tmp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("upgraded a copy of %s to schema %d (vec_blocks built) in %s", src, schemaVersion, time.Since(start).Round(time.Millisecond))
	if err := os.Rename(tmp, dst); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dst
}

func copyFile(b *testing.B, src, dst string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSimilar measures Similar(k=10) on the 1M-document database
// through vec_blocks (latency: p50-ms, p99-ms), for every tenant and scoped
// to one, and its recall@10 against the exact scan over 40 random
// documents per iteration (recall, run it -benchtime=1x: each exact scan
// takes about a second).
func BenchmarkSimilar(b *testing.B) {
	path := similarBenchDB(b)
	for _, tenant := range []string{"", "tenant-1"} {
		b.Run("tenant="+tenant, func(b *testing.B) {
			r, err := OpenReader(path, query.Options{Tenant: tenant})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(5, 5))
			id := func() string {
				for {
					id := querytest.BenchID(rng.IntN(benchDocs))
					if _, err := r.Document(ctx, id); !errors.Is(err, backend.ErrNotFound) {
						return id
					}
				}
			}
			b.Run("latency", func(b *testing.B) {
				var ds []time.Duration
				for b.Loop() {
					q := id()
					start := time.Now()
					res, err := r.Similar(ctx, q, 10)
					ds = append(ds, time.Since(start))
					if err != nil || len(res) != 10 {
						b.Fatalf("Similar(%s): %d results, %v", q, len(res), err)
					}
				}
				slices.Sort(ds)
				ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
				b.ReportMetric(ms(0.50), "p50-ms")
				b.ReportMetric(ms(0.99), "p99-ms")
			})
			b.Run("recall", func(b *testing.B) {
				for b.Loop() {
					ids := make([]string, 40)
					for i := range ids {
						ids[i] = id()
					}
					b.ReportMetric(recallAt10(b, r, ids), "recall@10")
				}
			})
		})
	}
}

// recallAt10 is the mean recall@10 of Similar against the exact scan over
// ids, tie-aware: a result counts when its exact score is at least the
// exact tenth best (several documents can share that score).
func recallAt10(tb testing.TB, r *Reader, ids []string) float64 {
	tb.Helper()
	ctx := context.Background()
	var found, want int
	for _, id := range ids {
		seq, dim, target, err := r.embeddingOf(ctx, id)
		if err != nil || target == nil {
			tb.Fatalf("%s: embedding %v, %v", id, target, err)
		}
		exact, err := r.nearestTo(ctx, seq, dim, target, 10, false)
		if err != nil {
			tb.Fatal(err)
		}
		got, err := r.Similar(ctx, id, 10)
		if err != nil {
			tb.Fatal(err)
		}
		want += len(exact)
		if len(exact) == 0 {
			continue
		}
		floor := exact[len(exact)-1].score
		for _, g := range got {
			if g.Score >= floor {
				found++
			}
		}
	}
	return float64(found) / float64(max(want, 1))
}

// BenchmarkSimilarDim measures Similar(k=10) through vec_blocks and the
// exact scan, alternately, on 20,000 documents of 1536 dimensions (an HTTP
// embedder's), and reports both p50s and the cost per stored vector: what
// a million such documents would take.
func BenchmarkSimilarDim(b *testing.B) {
	const n, dim = 20000, 1536
	db, path := openTest(b)
	rng := rand.New(rand.NewPCG(11, 11))
	docs := make([]*model.IndexDoc, 0, 500)
	for i := range n {
		d := testDoc(fmt.Sprintf("d%06d", i))
		d.TurnID = fmt.Sprintf("turn-%d", i/4)
		d.Embedding = make([]float64, dim)
		for k := range d.Embedding {
			d.Embedding[k] = rng.NormFloat64()
		}
		if docs = append(docs, d); len(docs) == cap(docs) {
			mustWrite(b, db, docs...)
			docs = docs[:0]
		}
	}
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var fast, exact []time.Duration
	for b.Loop() {
		seq, _, target, err := r.embeddingOf(ctx, fmt.Sprintf("d%06d", rng.IntN(n)))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []bool{true, false} {
			start := time.Now()
			if _, err := r.nearestTo(ctx, seq, dim, target, 10, f); err != nil {
				b.Fatal(err)
			}
			if f {
				fast = append(fast, time.Since(start))
			} else {
				exact = append(exact, time.Since(start))
			}
		}
	}
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / 1e6
	}
	f, e := p50(fast), p50(exact)
	b.ReportMetric(f, "vec-p50-ms")
	b.ReportMetric(e, "exact-p50-ms")
	b.ReportMetric(f*1e6/n, "vec-ns/doc")
	b.ReportMetric(e*1e6/n, "exact-ns/doc")
}
