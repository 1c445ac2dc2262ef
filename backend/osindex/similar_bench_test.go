package osindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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

// simBenchVersion is in the _meta of a similarity benchmark index: change
// it when querytest.SimDocs or the mapping changes.
const simBenchVersion = "1"

// BenchmarkSimilarKNN measures Similar(k=10) on OpenSearch's k-NN plugin
// at real embedders' dimensions over documents embedded by the hashed
// embedder from textCorpus texts (querytest.SimDocs, the embedded index's
// benchmark corpus), in an index with engram's mapping (lucene HNSW, l2,
// m 16, ef_construction 128): in-process latency p50/p99 of the HNSW
// query and of the exact scan (the knn_score script), recall@10 of the
// HNSW answer against the exact scan (tie-aware), the cluster's CPU per
// query of each, and, with ENGRAM_BIN set to an engram binary, the p50/p99
// wall and CPU time and peak RSS of `engram similar --limit 10` processes
// (start included). The sizes come from ENGRAM_BENCH_OS_SIMILAR, a list of
// DIMxN (e.g. "768x100000,1536x100000"); without it (or without
// ENGRAM_TEST_OPENSEARCH_URL) the benchmark is skipped. Each index,
// engram-bench-sim-DIMxN, is built once and kept; the run that builds it
// reports the indexing time (wall, this process's CPU, the node's CPU),
// and the report is kept in its _meta. ENGRAM_BENCH_QUERIES sets the
// queries per size (default 100), ENGRAM_BENCH_EXACT how many of them the
// exact scan also answers (default 30), ENGRAM_BENCH_CANDIDATES the
// candidate counts (ef_search) the in-process queries are timed with
// (default candidatesFor(DIM), which the binary always uses).
func BenchmarkSimilarKNN(b *testing.B) {
	spec := os.Getenv("ENGRAM_BENCH_OS_SIMILAR")
	if spec == "" {
		b.Skip("set ENGRAM_BENCH_OS_SIMILAR=DIMxN[,DIMxN...] (e.g. 768x100000)")
	}
	if !knnCluster(b) {
		b.Skip("needs the k-NN plugin")
	}
	queries, nExact := 100, 30
	if q, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_QUERIES")); err == nil && q > 0 {
		queries = q
	}
	if q, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_EXACT")); err == nil && q > 0 {
		nExact = q
	}
	for _, s := range strings.Split(spec, ",") {
		var dim, n int
		if _, err := fmt.Sscanf(s, "%dx%d", &dim, &n); err != nil {
			b.Fatalf("ENGRAM_BENCH_OS_SIMILAR %q: %v", s, err)
		}
		b.Run(s, func(b *testing.B) {
			name := simBenchIndex(b, dim, n)
			for b.Loop() {
				runSimilarKNN(b, name, dim, n, queries, min(nExact, queries))
			}
		})
	}
}

func runSimilarKNN(b *testing.B, name string, dim, n, queries, nExact int) {
	u := osURL(b)
	ctx := context.Background()
	ix, err := Open(ctx, Config{URLs: []string{u}, Index: name, Dimension: dim, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	r := newReader(b, ix, query.Options{})
	rng := rand.New(rand.NewPCG(uint64(dim), uint64(n)))
	ids := make([]string, queries)
	for i := range ids {
		ids[i] = fmt.Sprintf("v%07d", rng.IntN(n))
	}
	// A first query of each kind loads what the node reads from disk: the
	// measured ones see a warm node, as a node serving queries is.
	for _, exact := range []bool{false, true} {
		if _, err := r.similar(ctx, ids[0], 10, exact); err != nil {
			b.Fatal(err)
		}
	}
	var exactT, graphT []time.Duration
	floors := map[string]float64{}
	cpu0 := nodeCPU(b, u)
	for _, id := range ids[:nExact] {
		start := time.Now()
		ex, err := r.similar(ctx, id, 10, true)
		exactT = append(exactT, time.Since(start))
		if err != nil || len(ex) != 10 {
			b.Fatalf("%s: %d, %v", id, len(ex), err)
		}
		floors[id] = ex[len(ex)-1].Score
	}
	cpu1 := nodeCPU(b, u)
	b.ReportMetric(pctMs(exactT, 0.5), "exact-p50-ms")
	b.ReportMetric(pctMs(exactT, 0.99), "exact-p99-ms")
	b.ReportMetric(float64(cpu1-cpu0)/float64(nExact), "exact-node-cpu-ms/q")
	cands := []int{candidatesFor(dim)}
	if c := os.Getenv("ENGRAM_BENCH_CANDIDATES"); c != "" {
		cands = nil
		for _, f := range strings.Split(c, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				b.Fatalf("ENGRAM_BENCH_CANDIDATES %q", c)
			}
			cands = append(cands, n)
		}
	}
	defer func(c int) { similarCandidates = c }(similarCandidates)
	for _, c := range cands {
		similarCandidates = c
		graphT = graphT[:0]
		var found, want int
		cpu1 := nodeCPU(b, u)
		for _, id := range ids {
			start := time.Now()
			got, err := r.Similar(ctx, id, 10)
			graphT = append(graphT, time.Since(start))
			if err != nil || len(got) != 10 {
				b.Fatalf("%s: %d, %v", id, len(got), err)
			}
			if floor, ok := floors[id]; ok {
				want += 10
				for _, g := range got {
					// The exact scan's scores are float32 cosines.
					if g.Score >= floor-1e-5 {
						found++
					}
				}
			}
		}
		cpu2 := nodeCPU(b, u)
		b.ReportMetric(pctMs(graphT, 0.5), fmt.Sprintf("hnsw%d-p50-ms", c))
		b.ReportMetric(pctMs(graphT, 0.99), fmt.Sprintf("hnsw%d-p99-ms", c))
		b.ReportMetric(float64(cpu2-cpu1)/float64(queries), fmt.Sprintf("hnsw%d-node-cpu-ms/q", c))
		b.ReportMetric(float64(found)/float64(max(want, 1)), fmt.Sprintf("hnsw%d-recall@10", c))
	}
	if bin := os.Getenv("ENGRAM_BIN"); bin != "" {
		var wall, cpu []time.Duration
		var rss int64
		cpu3 := nodeCPU(b, u)
		for _, id := range ids {
			cmd := exec.Command(bin, "similar", "--json", "--limit", "10", id)
			cmd.Env = append(os.Environ(), "ENGRAM_INDEX=opensearch", "OPENSEARCH_URL="+u,
				"ENGRAM_OPENSEARCH_INDEX="+name, "ENGRAM_EMBEDDER=hashed",
				"ENGRAM_EMBEDDER_DIMENSION="+strconv.Itoa(dim))
			start := time.Now()
			out, err := cmd.Output()
			wall = append(wall, time.Since(start))
			if err != nil || strings.Count(string(out), "\n") != 10 {
				b.Fatalf("engram similar %s: %v\n%s", id, err, out)
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = max(rss, ru.Maxrss)
				cpu = append(cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
			}
		}
		cpu4 := nodeCPU(b, u)
		b.ReportMetric(pctMs(wall, 0.5), "bin-p50-ms")
		b.ReportMetric(pctMs(wall, 0.99), "bin-p99-ms")
		b.ReportMetric(pctMs(cpu, 0.5), "bin-cpu-p50-ms")
		b.ReportMetric(pctMs(cpu, 0.99), "bin-cpu-p99-ms")
		b.ReportMetric(float64(rss)/1024, "bin-maxrss-MiB")
		b.ReportMetric(float64(cpu4-cpu3)/float64(queries), "bin-node-cpu-ms/q")
	}
	var load [3]float64
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		_, _ = fmt.Sscanf(string(raw), "%f %f %f", &load[0], &load[1], &load[2])
		b.ReportMetric(load[0], "loadavg-1m")
	}
}

func pctMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / 1e6
}

// nodeCPU is the CPU time, in milliseconds, of the node's process so far
// (of every node: the benchmark's cluster has one).
func nodeCPU(b *testing.B, u string) int64 {
	var st struct {
		Nodes map[string]struct {
			Process struct {
				CPU struct {
					TotalInMillis int64 `json:"total_in_millis"`
				} `json:"cpu"`
			} `json:"process"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(mustAdmin(b, u, "GET", "/_nodes/stats/process", ""), &st); err != nil {
		b.Fatal(err)
	}
	var ms int64
	for _, n := range st.Nodes {
		ms += n.Process.CPU.TotalInMillis
	}
	return ms
}

// simBenchIndex is the name of the DIMxN benchmark index, built once.
func simBenchIndex(b *testing.B, dim, n int) string {
	u := osURL(b)
	ctx := context.Background()
	name := fmt.Sprintf("engram-bench-sim-%dx%d", dim, n)
	var meta map[string]struct {
		Mappings struct {
			Meta map[string]string `json:"_meta"`
		} `json:"mappings"`
	}
	if code, _ := admin(b, u, "HEAD", "/"+name, ""); code == 200 {
		_ = json.Unmarshal(mustAdmin(b, u, "GET", "/"+name+"/_mapping", ""), &meta)
		var count struct {
			Count int `json:"count"`
		}
		_ = json.Unmarshal(mustAdmin(b, u, "GET", "/"+name+"/_count", ""), &count)
		if m := meta[name].Mappings.Meta; m["engram_bench"] == simBenchVersion && count.Count == n {
			b.Logf("%s", m["engram_build"])
			return name
		}
	}
	b.Logf("building %s (%d documents of %d dimensions, once)", name, n, dim)
	admin(b, u, "DELETE", "/"+name, "")
	ix, err := Open(ctx, Config{URLs: []string{u}, Index: name, Dimension: dim})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	var writeT, writeCPU time.Duration
	var c0, c1 syscall.Rusage
	node0 := nodeCPU(b, u)
	begin := time.Now()
	err = querytest.SimDocs(n, dim, defaultBatchDocs, func(docs []*model.IndexDoc) error {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c0)
		start := time.Now()
		for i, r := range ix.Write(ctx, docs) {
			if r.Err != nil {
				return fmt.Errorf("%s: %w", docs[i].EventID, r.Err)
			}
		}
		writeT += time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &c1)
		writeCPU += time.Duration(c1.Utime.Nano() + c1.Stime.Nano() - c0.Utime.Nano() - c0.Stime.Nano())
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := ix.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	refreshT := time.Since(start)
	total := time.Since(begin)
	node1 := nodeCPU(b, u)
	var stats struct {
		All struct {
			Primaries struct {
				Store struct {
					Bytes int64 `json:"size_in_bytes"`
				} `json:"store"`
				Segments struct {
					Count int `json:"count"`
				} `json:"segments"`
			} `json:"primaries"`
		} `json:"_all"`
	}
	_ = json.Unmarshal(mustAdmin(b, u, "GET", "/"+name+"/_stats/store,segments", ""), &stats)
	p := stats.All.Primaries
	rep := fmt.Sprintf("built %s: %d docs in %v (writes %v wall, %.0f µs/doc; final refresh %v); this process %.0f µs CPU/doc in Write; node %.0f µs CPU/doc; store %.0f B/doc, %d segments",
		name, n, total.Round(time.Second), writeT.Round(time.Second), float64(writeT.Microseconds())/float64(n),
		refreshT.Round(time.Millisecond), float64(writeCPU.Microseconds())/float64(n),
		float64((node1-node0)*1000)/float64(n), float64(p.Store.Bytes)/float64(n), p.Segments.Count)
	b.Log(rep)
	metaBody, _ := json.Marshal(map[string]any{"_meta": map[string]string{"engram_bench": simBenchVersion, "engram_build": rep}})
	mustAdmin(b, u, "PUT", "/"+name+"/_mapping", string(metaBody))
	return name
}
