package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/backend/sqliteindex"
	"engram/backend/sqliteindex/sqlitetest"
	"engram/query"
	"engram/query/querytest"
)

// BenchmarkOverviewFirstFrame is a filter applied to the Overview over the
// million-document corpus, its clock in the middle of the corpus's 30 days
// so that its default day holds about 33,000 documents: from the filter
// to the frame drawn with the answer, the aggregation included (it runs
// off the UI goroutine in the program; here in line, on the clock), split
// by outcome as the view opens and by agent after b b. Reported as p50-ms
// and p99-ms.
func BenchmarkOverviewFirstFrame(b *testing.B) {
	r, err := sqliteindex.OpenReader(sqlitetest.BenchIndex(b), query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	d := testDeps(r, &memArchive{})
	now := querytest.BenchCorpusStart.Add(15 * 24 * time.Hour)
	d.Now = func() time.Time { return now }
	m := newTestModel(b, d, testOpts(b), 120, 40)
	runAll(m.setFocus(viewOverview))
	rng := rand.New(rand.NewPCG(11, 11))
	w := querytest.BenchWords
	for _, c := range []struct {
		name  string
		split int // presses of b from outcome
		expr  func() string
	}{
		{"none-by-outcome", 0, func() string { return "" }},
		{"agent-by-outcome", 0, func() string { return fmt.Sprintf("agent:agent-%d", rng.IntN(20)) }},
		{"failed-by-agent", 2, func() string { return "success:false" }},
		{"top10-word-by-agent", 2, func() string { return w[rng.IntN(10)] }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for m.overview.By() != splits(c.split) {
				m.overview.Update(keyMsg("b"))
			}
			var ds []time.Duration
			for b.Loop() {
				expr := c.expr()
				m.filter.applied = "id:none-such" // unclocked: so that expr is a change
				settleOverview(b, m, m.applyFilter(), m.filter.applied)
				m.filter.applied = expr
				start := time.Now()
				settleOverview(b, m, m.applyFilter(), expr)
				_ = m.View()
				ds = append(ds, time.Since(start))
				if s := m.overview.Stats(); s == nil || s.All.Count == 0 {
					b.Fatalf("%q: no answer drawn (%v)", expr, m.overview.Err())
				}
			}
			slices.Sort(ds)
			ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}

// settleOverview runs cmd and what its answers start, as the program
// would, until the Overview has drawn its answer for expr: the stream's
// first page lands first, and the Overview follows the stream's filter.
func settleOverview(b *testing.B, m *Model, cmd tea.Cmd, expr string) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		if m.overview.Filter() == expr && !m.overview.Busy() && m.overview.Stats() != nil {
			return
		}
		c := queue[0]
		queue = queue[1:]
		for _, msg := range runAllWithin(c, time.Minute) {
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	b.Fatalf("%q: the Overview never answered", expr)
}

// splits is the Overview's split after n presses of b from outcome.
func splits(n int) string {
	return []string{query.ByOutcome, query.ByType, query.ByAgent}[n]
}

// runAllWithin is runAll with a longer wait for each command.
func runAllWithin(cmd tea.Cmd, wait time.Duration) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg, ok := runCmd(cmd, wait)
	if !ok || msg == nil {
		return nil
	}
	if b, isBatch := msg.(tea.BatchMsg); isBatch {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runAllWithin(c, wait)...)
		}
		return out
	}
	return []tea.Msg{msg}
}
