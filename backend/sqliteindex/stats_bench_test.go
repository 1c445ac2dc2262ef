package sqliteindex

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"engram/query"
	"engram/query/querytest"
)

// BenchmarkStats aggregates the 1M-document database (30 days): a day by
// hour split by agent, four weeks by day, and four weeks by day split by
// agent and by tag, reporting latency percentiles (p50-ms, p99-ms) and
// the process's CPU time a call (cpu-p50-ms, cpu-p99-ms), which a shared
// machine's load inflates far less than the wall time.
func BenchmarkStats(b *testing.B) {
	path := benchDB(b)
	if db, err := Open(path, Options{}); err == nil { // a writer creates docs_stats on a database built before it
		db.Close()
	}
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	t0 := querytest.BenchCorpusStart
	day := t0.Add(14 * 24 * time.Hour)
	for _, c := range []struct {
		name string
		q    query.StatsQuery
	}{
		{"24h-by-hour-by-agent", query.StatsQuery{Since: day, Until: day.Add(24 * time.Hour), Every: time.Hour, By: query.ByAgent}},
		{"24h-by-hour-failed", query.StatsQuery{Since: day, Until: day.Add(24 * time.Hour), Every: time.Hour, Expr: "success:false"}},
		{"28d-by-day", query.StatsQuery{Since: t0, Until: t0.Add(28 * 24 * time.Hour), Every: 24 * time.Hour}},
		{"28d-by-day-by-agent", query.StatsQuery{Since: t0, Until: t0.Add(28 * 24 * time.Hour), Every: 24 * time.Hour, By: query.ByAgent}},
		{"28d-by-day-by-tag", query.StatsQuery{Since: t0, Until: t0.Add(28 * 24 * time.Hour), Every: 24 * time.Hour, By: query.ByTag}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var ds, cpu []time.Duration
			for b.Loop() {
				start, cpu0 := time.Now(), cpuTime()
				s, err := r.Stats(ctx, c.q)
				if err == nil && s.All.Count == 0 {
					err = fmt.Errorf("no documents in the range")
				}
				if err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				cpu = append(cpu, cpuTime()-cpu0)
			}
			for _, m := range []struct {
				ds     []time.Duration
				prefix string
			}{{ds, ""}, {cpu, "cpu-"}} {
				slices.Sort(m.ds)
				ms := func(q float64) float64 { return float64(m.ds[int(q*float64(len(m.ds)-1))]) / 1e6 }
				b.ReportMetric(ms(0.50), m.prefix+"p50-ms")
				b.ReportMetric(ms(0.99), m.prefix+"p99-ms")
			}
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
