package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"engram/backend/sqliteindex"
	"engram/backend/sqliteindex/sqlitetest"
	"engram/query"
	"engram/query/querytest"
)

// BenchmarkFilterFirstPage is a filter applied in the stream over the
// million-document corpus (querytest.BenchCorpus, whose most frequent
// words are in most documents): from Enter in the filter bar to the first
// page drawn, the query included (it runs off the UI goroutine in the
// program; here in line, on the clock). Reported as p50-ms and p99-ms.
func BenchmarkFilterFirstPage(b *testing.B) {
	r, err := sqliteindex.OpenReader(sqlitetest.BenchIndex(b), query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	o := testOpts(b)
	o.PageSize, o.BufferRows = 200, 10000
	m := newTestModel(b, testDeps(r, &memArchive{}), o, 80, 24)
	rng := rand.New(rand.NewPCG(9, 9))
	w := querytest.BenchWords
	top := func() string { return w[rng.IntN(10)] }
	for _, c := range []struct {
		name string
		expr func() string
	}{
		{"top10", top},
		{"rank10-200", func() string { return w[10+rng.IntN(190)] }},
		{"two-top10", func() string { return top() + " " + top() }},
		{"top10-agent", func() string { return fmt.Sprintf("%s agent:agent-%d", top(), rng.IntN(20)) }},
		{"top10-failed", func() string { return top() + " type:tool_result success:false" }},
		{"top10-day", func() string {
			d := querytest.BenchCorpusStart.AddDate(0, 0, rng.IntN(30))
			return fmt.Sprintf("%s since:%s until:%s", top(), d.Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				m.filter.applied = c.expr()
				start := time.Now()
				for _, msg := range runAll(m.applyFilter()) {
					m.Update(msg) // what it starts next (the turns) is not the first page
				}
				_ = m.View()
				ds = append(ds, time.Since(start))
				if m.stream.Rows().Len() == 0 || m.stream.Shown() != m.filter.applied {
					b.Fatalf("%q: %d rows shown under %q", m.filter.applied, m.stream.Rows().Len(), m.stream.Shown())
				}
			}
			slices.Sort(ds)
			ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}
