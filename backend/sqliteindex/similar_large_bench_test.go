package sqliteindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// BenchmarkSimilarLarge measures Similar(k=10) at real embedders'
// dimensions over documents embedded by the hashed embedder from
// textCorpus texts (see querytest.SimDocs), the sign-bit path side by side with the
// exact scan in one run: latency p50/p99 of each in-process, recall@10 of
// the sign-bit path against the exact scan (tie-aware), the filtered
// recall (type, time, tenant), and, with ENGRAM_BIN set to an engram
// binary, the p50/p99 wall time, CPU time and peak RSS of `engram similar
// --limit 10` processes (start included); ENGRAM_BIN=A,B,... compares
// binaries, run in turn query by query. The sizes come from
// ENGRAM_BENCH_SIMILAR, a list of DIMxN (e.g. "768x100000,1536x1000000");
// without it the benchmark is skipped. Each database is built once into
// $TMPDIR/engram-sim-DIMxN/index.db (its write cost and size per document
// are reported on the run that builds it, and kept in build.txt beside
// it). ENGRAM_BENCH_QUERIES sets the queries per size (default 100; the
// exact scan runs for the first 30 of them at most).
func BenchmarkSimilarLarge(b *testing.B) {
	spec := os.Getenv("ENGRAM_BENCH_SIMILAR")
	if spec == "" {
		b.Skip("set ENGRAM_BENCH_SIMILAR=DIMxN[,DIMxN...] (e.g. 768x100000)")
	}
	queries := 100
	if q, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_QUERIES")); err == nil && q > 0 {
		queries = q
	}
	for _, s := range strings.Split(spec, ",") {
		var dim, n int
		if _, err := fmt.Sscanf(s, "%dx%d", &dim, &n); err != nil {
			b.Fatalf("ENGRAM_BENCH_SIMILAR %q: %v", s, err)
		}
		b.Run(s, func(b *testing.B) {
			dir := simBenchDB(b, dim, n)
			for b.Loop() {
				runSimilarLarge(b, dir, dim, n, queries)
			}
		})
	}
}

func runSimilarLarge(b *testing.B, dir string, dim, n, queries int) {
	path := filepath.Join(dir, "index.db")
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(dim), uint64(n)))
	ids := make([]string, queries)
	for i := range ids {
		ids[i] = fmt.Sprintf("v%07d", rng.IntN(n))
	}
	// The exact scan of the first 30 queries (ENGRAM_BENCH_EXACT) is the
	// reference.
	var exact []time.Duration
	floors := map[string]float64{}
	nExact := 30
	if q, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_EXACT")); err == nil && q > 0 {
		nExact = q
	}
	for _, id := range ids[:min(nExact, len(ids))] {
		seq, d, target, err := r.embeddingOf(ctx, id)
		if err != nil || target == nil {
			b.Fatalf("%s: %v", id, err)
		}
		start := time.Now()
		ex, err := r.nearestIn(ctx, seq, d, target, 10, false, SimilarFilter{})
		exact = append(exact, time.Since(start))
		if err != nil || len(ex) != 10 {
			b.Fatalf("%s: %d, %v", id, len(ex), err)
		}
		floors[id] = ex[len(ex)-1].score
	}
	pct := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))]) / 1e6
	}
	b.ReportMetric(pct(exact, 0.5), "exact-p50-ms")
	b.ReportMetric(pct(exact, 0.99), "exact-p99-ms")
	cands := []int{bitsCandidates}
	if c := os.Getenv("ENGRAM_BENCH_CANDIDATES"); c != "" {
		cands = nil
		for _, f := range strings.Split(c, ",") {
			n, _ := strconv.Atoi(f)
			cands = append(cands, n)
		}
	}
	defer func(c int) { bitsCandidates = c }(bitsCandidates)
	for _, c := range cands {
		bitsCandidates = c
		var fast []time.Duration
		var found, want int
		for _, id := range ids {
			seq, d, target, err := r.embeddingOf(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			got, err := r.nearestIn(ctx, seq, d, target, 10, true, SimilarFilter{})
			fast = append(fast, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if floor, ok := floors[id]; ok {
				want += 10
				for _, g := range got {
					if g.score >= floor-1e-9 {
						found++
					}
				}
			}
		}
		b.ReportMetric(pct(fast, 0.5), fmt.Sprintf("bits%d-p50-ms", c))
		b.ReportMetric(pct(fast, 0.99), fmt.Sprintf("bits%d-p99-ms", c))
		b.ReportMetric(float64(found)/float64(max(want, 1)), fmt.Sprintf("bits%d-recall@10", c))
	}
	bitsCandidates = cands[len(cands)-1]
	var found, want int
	// Filtered: the exact scan with the same filter is the reference.
	from := querytest.SimStart.Add(time.Duration(n/4) * time.Minute)
	f := SimilarFilter{Types: []string{"tool_result"}, From: from, To: from.Add(time.Duration(n/2) * time.Minute)}
	rt, err := OpenReader(path, query.Options{Tenant: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	for _, id := range ids[:min(10, len(ids))] {
		seq, d, target, err := r.embeddingOf(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		got, err := rt.nearestIn(ctx, seq, d, target, 10, true, f)
		if err != nil {
			b.Fatal(err)
		}
		ex, err := rt.nearestIn(ctx, seq, d, target, 10, false, f)
		if err != nil {
			b.Fatal(err)
		}
		want += len(ex)
		if len(ex) > 0 {
			floor := ex[len(ex)-1].score
			for _, g := range got {
				if g.score >= floor-1e-9 {
					found++
				}
			}
		}
	}
	b.ReportMetric(float64(found)/float64(max(want, 1)), "filtered-recall@10")
	bins := strings.Split(os.Getenv("ENGRAM_BIN"), ",")
	if bins[0] == "" {
		return
	}
	// Several binaries (variants to compare) run one query each in turn,
	// the first of them rotating: the one run first reads the candidates'
	// rows from disk more often than those after it.
	wall, cpu := make([][]time.Duration, len(bins)), make([][]time.Duration, len(bins))
	rss := make([]int64, len(bins))
	for q, id := range ids {
		for j := range bins {
			j = (j + q) % len(bins)
			cmd := exec.Command(bins[j], "similar", "--data", dir, "--limit", "10", "--json", id)
			cmd.Env = append(os.Environ(), "ENGRAM_INDEX=sqlite")
			start := time.Now()
			out, err := cmd.Output()
			wall[j] = append(wall[j], time.Since(start))
			if err != nil || strings.Count(string(out), "\n") != 10 {
				b.Fatalf("%s similar %s: %v\n%s", bins[j], id, err, out)
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss[j] = max(rss[j], ru.Maxrss)
				cpu[j] = append(cpu[j], cpuOf(*ru))
			}
		}
	}
	for j := range bins {
		name := "bin"
		if len(bins) > 1 {
			name = fmt.Sprintf("bin%d", j+1)
		}
		b.ReportMetric(pct(wall[j], 0.5), name+"-p50-ms")
		b.ReportMetric(pct(wall[j], 0.99), name+"-p99-ms")
		b.ReportMetric(float64(rss[j])/1024, name+"-maxrss-MiB")
		if len(cpu[j]) > 0 {
			b.ReportMetric(pct(cpu[j], 0.5), name+"-cpu-p50-ms")
			b.ReportMetric(pct(cpu[j], 0.99), name+"-cpu-p99-ms")
		}
	}
	var load [3]float64
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		_, _ = fmt.Sscanf(string(raw), "%f %f %f", &load[0], &load[1], &load[2])
		b.ReportMetric(load[0], "loadavg-1m")
	}
}

// simBenchDB is the directory of the DIMxN benchmark index, built once.
func simBenchDB(b *testing.B, dim, n int) string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("engram-sim-%dx%d", dim, n))
	marker := filepath.Join(dir, "built.v1")
	if _, err := os.Stat(marker); err == nil {
		if rep, err := os.ReadFile(filepath.Join(dir, "build.txt")); err == nil {
			b.Logf("%s", rep)
		}
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	db.SetEmbedder("hashed")
	var embedT, writeT time.Duration
	var cpu0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var writeCPU time.Duration
	last := time.Now()
	err = querytest.SimDocs(n, dim, 500, func(docs []*model.IndexDoc) error {
		embedT += time.Since(last)
		var c0, c1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c0)
		start := time.Now()
		for _, r := range db.Write(context.Background(), docs) {
			if r.Err != nil {
				return r.Err
			}
		}
		writeT += time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c1)
		writeCPU += cpuOf(c1) - cpuOf(c0)
		last = time.Now()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	var size, bitsSize int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	if st, err := os.Stat(bitsPath(mustAbs(b, path), dim)); err == nil {
		bitsSize = st.Size()
	}
	rep := fmt.Sprintf("built %dx%d: embedding (hashed) %.1f µs/doc wall; index write %.1f µs/doc wall, %.1f µs/doc CPU; index.db %.0f B/doc, sign bits %.0f B/doc",
		dim, n, float64(embedT.Microseconds())/float64(n), float64(writeT.Microseconds())/float64(n),
		float64(writeCPU.Microseconds())/float64(n), float64(size)/float64(n), float64(bitsSize)/float64(n))
	b.Log(rep)
	_ = os.WriteFile(filepath.Join(dir, "build.txt"), []byte(rep+"\n"), 0o644)
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func cpuOf(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func mustAbs(b *testing.B, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkIndexWriteDim measures the index write per document at 8 and
// at 1536 dimensions (the stub's and an HTTP embedder's), CPU time of the
// whole process (the writer's goroutines and SQLite), 20,000 documents
// each into a fresh index; and the hashed embedder's own cost per text.
func BenchmarkIndexWriteDim(b *testing.B) {
	const n = 20000
	for _, dim := range []int{8, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			var batches [][]*model.IndexDoc
			_ = querytest.SimDocs(n, dim, 500, func(d []*model.IndexDoc) error {
				batches = append(batches, slices.Clone(d))
				return nil
			})
			for b.Loop() {
				db, _ := openTest(b)
				var c0, c1 syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c0)
				start := time.Now()
				for _, d := range batches {
					for _, r := range db.Write(context.Background(), d) {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
				wall := time.Since(start)
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c1)
				b.ReportMetric(float64((cpuOf(c1)-cpuOf(c0)).Microseconds())/n, "cpu-µs/doc")
				b.ReportMetric(float64(wall.Microseconds())/n, "wall-µs/doc")
				db.Close()
				for _, d := range batches {
					for _, x := range d {
						x.IngestedAt = ""
					}
				}
			}
		})
	}
}
