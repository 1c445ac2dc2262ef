package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"engram/query"
)

// Stats aggregates in SQL: the sums one bucket a statement (a streaming
// aggregate with no sort), the latencies as histograms of exact values whose
// nearest ranks are the percentiles, rolled up here, so at most a row comes
// back per distinct latency of a bucket and group, never one per document.
func (r *Reader) Stats(ctx context.Context, q query.StatsQuery) (*query.Stats, error) {
	q, err := q.Resolve(r.now())
	if err != nil {
		return nil, err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return nil, err
	}
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return query.NewStats(q, nil), nil
	}
	run := statsRun{r: r, p: p, q: q, covered: r.hasIndex(ctx, "docs_stats"), workers: runtime.GOMAXPROCS(0)}
	var groups []string
	if q.By == query.ByTag { // a document past the top twice is in other once: counted apart
		if groups, err = run.topTags(ctx); err != nil {
			return nil, err
		}
	}
	sums, err := run.sums(ctx, groups)
	if err != nil {
		return nil, err
	}
	if q.By != "" && q.By != query.ByTag {
		groups = topOfSums(sums, q.Top)
	}
	lats, err := run.lats(ctx, groups)
	if err != nil {
		return nil, err
	}
	s := query.NewStats(q, groups)
	accumulate(s, sums, lats)
	return s, nil
}

// statsRun is one Stats call's statements over plan p.
type statsRun struct {
	r       *Reader
	p       *plan
	q       query.StatsQuery
	covered bool
	workers int
}

// topTags are the top tags of the range, counted by a statement a part.
func (run statsRun) topTags(ctx context.Context) ([]string, error) {
	parts := statsParts(run.q, run.workers)
	counts := make([]map[string]int64, len(parts))
	err := eachPart(parts, run.workers, func(i int, part query.StatsQuery) (err error) {
		from, args := statsFrom(run.p, part, run.covered)
		counts[i], err = run.r.groupCounts(ctx, from, args, run.q)
		return err
	})
	if err != nil {
		return nil, err
	}
	return query.TopGroups(sumCounts(counts), run.q.Top), nil
}

// sums runs sumSQL a part, on workers connections side by side.
// Without groups (split by other than tag, before the top is known) a
// row holds a group as it is.
func (run statsRun) sums(ctx context.Context, groups []string) ([][]sumRow, error) {
	return eachStatsPart(ctx, run, groups, sumSQL, scanSum)
}

// lats runs latSQL a part.
func (run statsRun) lats(ctx context.Context, groups []string) ([][]latRow, error) {
	return eachStatsPart(ctx, run, groups, latSQL, scanLat)
}

// eachStatsPart runs the statement stmt makes once a part, side by side
// on workers connections, and scans its rows. A part is a bucket: a
// bucket's sums not split by a field are then a streaming aggregate, and
// sorting a bucket's latencies apart costs less than sorting a run of
// buckets' by bucket and latency. With a full-text match, though, each
// statement first collects the documents holding the words (for a common
// word, most of the index), so the parts are as few as the workers.
func eachStatsPart[T any](ctx context.Context, run statsRun, groups []string, stmt func(by, with string, buckets bool) string, scan func(*sql.Rows) (T, bool, error)) ([][]T, error) {
	n := run.q.NumBuckets()
	if run.p.match != "" {
		n = run.workers
	}
	buckets := statsParts(run.q, n)
	out := make([][]T, len(buckets))
	// Every part's statement is the same but for its arguments.
	with, _ := statsWith(run.p, run.q, buckets[0], groups, run.covered)
	prepared, err := run.r.q.PrepareContext(ctx, stmt(run.q.By, with, len(buckets) < run.q.NumBuckets()))
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer prepared.Close()
	err = eachPart(buckets, run.workers, func(i int, part query.StatsQuery) error {
		_, args := statsWith(run.p, run.q, part, groups, run.covered)
		rows, err := prepared.QueryContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("sqlite: stats: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			x, ok, err := scan(rows)
			if err != nil {
				return fmt.Errorf("sqlite: stats: %w", err)
			}
			if ok {
				out[i] = append(out[i], x)
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: stats: %w", err)
		}
		return nil
	})
	return out, err
}

// topOfSums chooses the top groups from the sums' rows of each group as it
// is, and names the rest other in them.
func topOfSums(sums [][]sumRow, top int) []string {
	counts := map[string]int64{}
	for _, rows := range sums {
		for _, x := range rows {
			counts[x.g] += x.sums.n
		}
	}
	groups := query.TopGroups(counts, top)
	if len(groups) > 0 && groups[len(groups)-1] == query.GroupOther {
		kept := groups[:len(groups)-1]
		for _, rows := range sums {
			for i := range rows {
				if !slices.Contains(kept, rows[i].g) {
					rows[i].g = query.GroupOther
				}
			}
		}
	}
	return groups
}

// statsParts cuts the resolved q's range into at most n runs of whole
// buckets, read side by side: SQLite groups a statement's rows on one
// core, and a month of a million documents is most of a second of it.
func statsParts(q query.StatsQuery, n int) []query.StatsQuery {
	nb := q.NumBuckets()
	n = max(1, min(n, nb))
	parts := make([]query.StatsQuery, 0, n)
	for k := range n {
		part := q
		part.Since = q.Since.Add(time.Duration(k*nb/n) * q.Every)
		if k < n-1 {
			part.Until = q.Since.Add(time.Duration((k+1)*nb/n) * q.Every)
		}
		parts = append(parts, part)
	}
	return parts
}

// eachPart runs fn on every part, at most workers at a time, and
// returns the first error.
func eachPart(parts []query.StatsQuery, workers int, fn func(int, query.StatsQuery) error) error {
	errs := make([]error, len(parts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(parts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i, parts[i])
			}
		}()
	}
	for i := range parts {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func sumCounts(parts []map[string]int64) map[string]int64 {
	sum := map[string]int64{}
	for _, c := range parts {
		for g, n := range c {
			sum[g] += n
		}
	}
	return sum
}

// The levels of an answer: per bucket and group, per bucket, per group
// over the range, everything.
const (
	lvlBucketGroup = iota
	lvlBucket
	lvlGroup
	lvlAll
)

// levels are the four levels as the source rows and partition of each.
var levels = []struct{ src, by string }{
	lvlBucketGroup: {"m", "b, g"}, lvlBucket: {"m1", "b"}, lvlGroup: {"m", "g"}, lvlAll: {"m1", "''"},
}

// agg is the place of a level's row in s.
func agg(s *query.Stats, lvl int, b int64, g string) *query.Agg {
	gi := s.GroupIndex(g)
	switch {
	case lvl == lvlAll:
		return &s.All
	case lvl == lvlGroup && gi >= 0:
		return &s.Total[gi]
	case b < 0 || int(b) >= len(s.Buckets):
		return nil
	case lvl == lvlBucket:
		return &s.Buckets[b].All
	case lvl == lvlBucketGroup && gi >= 0:
		return &s.Buckets[b].Groups[gi]
	}
	return nil
}

// accumulate rolls the rows of every statement up into s: sums, means
// and the latency histograms' percentiles.
func accumulate(s *query.Stats, sums [][]sumRow, lats [][]latRow) {
	for _, rows := range sums {
		for _, x := range rows {
			for _, up := range rollUp(s.By, x.lvl) {
				if a := agg(s, up, x.b, x.g); a != nil {
					x.sums.addTo(a)
				}
			}
		}
	}
	hist := map[*query.Agg][]latCount{}
	for _, rows := range lats {
		for _, x := range rows {
			for _, up := range rollUp(s.By, x.lvl) {
				if a := agg(s, up, x.b, x.g); a != nil {
					hist[a] = append(hist[a], x.latCount)
				}
			}
		}
	}
	eachAgg(s, func(a *query.Agg) {
		if a.Count > 0 { // the means were summed
			a.Reward.Mean /= float64(a.Count)
			a.Importance.Mean /= float64(a.Count)
		}
		a.Latency = percentiles(hist[a])
	})
}

// latCount is how many documents of a set have one latency.
type latCount struct {
	lat float64
	n   int64
}

// percentiles are the nearest-rank percentiles of a histogram of exact
// values (a value may come more than once, from finer sets).
func percentiles(h []latCount) query.Percentiles {
	slices.SortFunc(h, func(x, y latCount) int { return cmp.Compare(x.lat, y.lat) })
	var p query.Percentiles
	for _, c := range h {
		p.N += c.n
	}
	if p.N == 0 {
		return p
	}
	targets := []struct {
		rank int64
		to   *float64
	}{{query.Rank(50, p.N), &p.P50}, {query.Rank(95, p.N), &p.P95}, {query.Rank(99, p.N), &p.P99}}
	var seen int64
	t := 0
	for _, c := range h {
		seen += c.n
		for t < len(targets) && targets[t].rank <= seen {
			*targets[t].to = c.lat
			t++
		}
	}
	return p
}

// rollUp is every level a row of level lvl counts in.
func rollUp(by string, lvl int) []int {
	switch {
	case lvl == lvlBucket:
		return []int{lvlBucket, lvlAll}
	case by == query.ByTag:
		return []int{lvlBucketGroup, lvlGroup}
	}
	return []int{lvlBucketGroup, lvlBucket, lvlGroup, lvlAll}
}

// sums are what a set of documents adds to an Agg.
type sums struct {
	n, fails int64
	rw, im   float64
	rb, ib   [query.DistBins]int64
}

// addTo adds c into a, its means as sums until eachAgg divides them.
func (c *sums) addTo(a *query.Agg) {
	a.Count += c.n
	a.Failures += c.fails
	a.Reward.Mean += c.rw
	a.Importance.Mean += c.im
	for i := range c.rb {
		a.Reward.Bins[i] += c.rb[i]
		a.Importance.Bins[i] += c.ib[i]
	}
}

// eachAgg calls fn on every Agg of s.
func eachAgg(s *query.Stats, fn func(*query.Agg)) {
	fn(&s.All)
	for i := range s.Total {
		fn(&s.Total[i])
	}
	for i := range s.Buckets {
		fn(&s.Buckets[i].All)
		for j := range s.Buckets[i].Groups {
			fn(&s.Buckets[i].Groups[j])
		}
	}
}
