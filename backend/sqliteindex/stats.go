package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"engram/query"
)

// statsIndex covers what Stats reads of a document, so that a month of a
// million documents is aggregated from the index alone, never from the
// wide rows (their summaries, JSON and embeddings).
const statsIndex = `CREATE INDEX IF NOT EXISTS docs_stats ON docs(ts_unix_ms, event_type, agent_id, tool, tenant_id, success, latency_ms, reward_score, importance_score)`

// groupSQL is the group of a document of docs d for each split.
var groupSQL = map[string]string{
	"":              "''",
	query.ByType:    "d.event_type",
	query.ByAgent:   "coalesce(nullif(d.agent_id, ''), '" + query.GroupNone + "')",
	query.ByTool:    "coalesce(nullif(d.tool, ''), '" + query.GroupNone + "')",
	query.BySession: "coalesce(nullif(d.session_id, ''), '" + query.GroupNone + "')",
	query.ByTenant:  "coalesce(nullif(d.tenant_id, ''), '" + query.GroupNone + "')",
	query.ByOutcome: "CASE d.success WHEN 1 THEN '" + query.OutcomeOK + "' WHEN 0 THEN '" + query.OutcomeFailed + "' ELSE '" + query.OutcomeUnknown + "' END",
	query.ByTag:     "coalesce(t.value, '" + query.GroupNone + "')",
}

// Stats aggregates in SQL: the top groups first, then one statement that
// groups the documents by bucket, group and latency, which is rolled up
// here into every level with its exact percentiles. What comes back is at
// most a row a distinct latency of each bucket and group, never a row a
// document.
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
	covered := r.hasIndex(ctx, "docs_stats")
	parts := statsParts(q, runtime.GOMAXPROCS(0))
	var groups []string
	if q.By != "" {
		counts := make([]map[string]int64, len(parts))
		err := eachPart(parts, func(i int, part query.StatsQuery) (err error) {
			from, args := statsFrom(p, part, covered)
			counts[i], err = r.groupCounts(ctx, from, args, q)
			return err
		})
		if err != nil {
			return nil, err
		}
		groups = query.TopGroups(sumCounts(counts), q.Top)
	}
	s := query.NewStats(q, groups)
	rows := make([][]statRow, len(parts))
	err = eachPart(parts, func(i int, part query.StatsQuery) (err error) {
		from, args := statsFrom(p, part, covered)
		m, margs := statsRows(from, args, q, groups)
		rows[i], err = r.statRows(ctx, s.By, m, margs)
		return err
	})
	if err != nil {
		return nil, err
	}
	accumulate(s, rows)
	return s, nil
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

// eachPart runs fn on every part side by side, and returns the first
// error.
func eachPart(parts []query.StatsQuery, fn func(int, query.StatsQuery) error) error {
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, part)
		}()
	}
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

// statsFrom is the FROM and WHERE of the documents of q, each with its
// group as g (a document once a tag when split by tag), and their
// arguments.
func statsFrom(p *plan, q query.StatsQuery, covered bool) (string, []any) {
	f, args := p.filterAll("d.seq")
	from := "docs d"
	if covered { // the planner may prefer docs_ts, which reads every row
		from += " INDEXED BY docs_stats"
	}
	if q.By == query.ByTag {
		from += " LEFT JOIN json_each(d.tags) t"
	}
	w := "d.ts_unix_ms >= ? AND d.ts_unix_ms < ? AND " + f
	args = append([]any{q.Since.UnixMilli(), q.Until.UnixMilli()}, args...)
	if p.match != "" {
		w += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		args = append(args, p.match)
	}
	return fmt.Sprintf("SELECT d.seq AS seq, %s AS g, d.ts_unix_ms AS ts, d.success AS s, d.latency_ms AS lat, d.reward_score AS rw, d.importance_score AS im FROM %s WHERE %s",
		groupSQL[q.By], from, w), args
}

// hasIndex: the index name exists (an index written by an older engram
// may lack one until a writer opens it).
func (r *Reader) hasIndex(ctx context.Context, name string) bool {
	var n int
	err := r.q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?", name).Scan(&n)
	return err == nil && n > 0
}

func (r *Reader) groupCounts(ctx context.Context, from string, args []any, q query.StatsQuery) (map[string]int64, error) {
	count := "count(*)"
	if q.By == query.ByTag { // a tag twice in one document counts once
		count = "count(DISTINCT seq)"
	}
	rows, err := r.q.QueryContext(ctx, "SELECT g, "+count+" FROM ("+from+") GROUP BY g", args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer rows.Close()
	counts := map[string]int64{}
	for rows.Next() {
		var g string
		var n int64
		if err := rows.Scan(&g, &n); err != nil {
			return nil, fmt.Errorf("sqlite: stats: %w", err)
		}
		counts[g] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	return counts, nil
}

// statsRows is the WITH clause of the two statements: m, the documents
// with their bucket b and their group g past the top as other (once each
// per group), and m1, each document once.
func statsRows(from string, args []any, q query.StatsQuery, groups []string) (string, []any) {
	g := "g"
	var gargs []any
	if len(groups) > 0 && groups[len(groups)-1] == query.GroupOther {
		top := groups[:len(groups)-1]
		g = "CASE WHEN g IN (?" + strings.Repeat(",?", len(top)-1) + ") THEN g ELSE '" + query.GroupOther + "' END"
		for _, t := range top {
			gargs = append(gargs, t)
		}
	}
	lo, every := q.Since.UnixMilli(), q.Every.Milliseconds()
	// Split by tag, a document is a row a tag (two tags past the top: two
	// rows of other, made one by DISTINCT), and m1 holds it once; else
	// both are the documents, and m1 is m.
	distinct, materialized, m1 := "", "", "m1 AS (SELECT * FROM m) "
	if q.By == query.ByTag {
		distinct, materialized, m1 = "DISTINCT ", "MATERIALIZED ", "m1 AS MATERIALIZED (SELECT DISTINCT seq, b, '' AS g, s, lat, rw, im FROM m) "
	}
	sql := "WITH m AS " + materialized + "(SELECT " + distinct + "seq, (ts - ?) / ? AS b, " + g + " AS g, s, lat, rw, im FROM (" + from + ")), " + m1
	return sql, append(append([]any{lo, every}, gargs...), args...)
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

// binSums count the documents at or past each bin's lower edge but the
// first: a comparison a bin is a third of what clamping the bin number
// costs, and the bins are their differences (fromAtLeast). Edges are
// compared as Bin computes them, col × DistBins against k.
func binSums(col string) string {
	var b strings.Builder
	for k := 1; k < query.DistBins; k++ {
		fmt.Fprintf(&b, ", total(%s * %d >= %d)", col, query.DistBins, k)
	}
	return b.String()
}

// fromAtLeast turns binSums' counts (atLeast[k-1]: documents in bin k or
// past it) of n documents into the bins' counts.
func fromAtLeast(n int64, atLeast [query.DistBins - 1]float64) (bins [query.DistBins]int64) {
	prev := n
	for k := 1; k < query.DistBins; k++ {
		bins[k-1] = prev - int64(atLeast[k-1])
		prev = int64(atLeast[k-1])
	}
	bins[query.DistBins-1] = prev
	return bins
}

// statRow is a row of statRows: a level's sums for one bucket, group
// and latency.
type statRow struct {
	lvl  int
	b    int64
	g    string
	lat  sql.NullFloat64
	sums sums
}

// statRows sums in SQL only the finest level each document is counted at
// once in, by latency too: the coarser levels are sums of it (accumulate),
// and each level's latencies a histogram of exact values whose nearest
// ranks are its percentiles. Split by tag a document may be in several
// groups of a bucket, so the buckets' own rows come from m1.
func (r *Reader) statRows(ctx context.Context, by, with string, args []any) ([]statRow, error) {
	lvls := []int{lvlBucketGroup}
	switch by {
	case "":
		lvls = []int{lvlBucket}
	case query.ByTag:
		lvls = []int{lvlBucketGroup, lvlBucket}
	}
	parts := make([]string, len(lvls))
	for i, lvl := range lvls {
		l := levels[lvl]
		parts[i] = fmt.Sprintf("SELECT %d, %s, %s, lat, count(*), total(s IS 0), total(rw), total(im)%s%s FROM %s GROUP BY %s, lat",
			lvl, col(l.by, "b", "-1"), col(l.by, "g", "''"), binSums("rw"), binSums("im"), l.src, l.by)
	}
	rows, err := r.q.QueryContext(ctx, with+strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer rows.Close()
	var out []statRow
	for rows.Next() {
		var x statRow
		c := &x.sums
		dest := []any{&x.lvl, &x.b, &x.g, &x.lat, &c.n, &c.fails, &c.rw, &c.im}
		var rge, ige [query.DistBins - 1]float64
		for i := range rge {
			dest = append(dest, &rge[i])
		}
		for i := range ige {
			dest = append(dest, &ige[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlite: stats: %w", err)
		}
		c.rb, c.ib = fromAtLeast(c.n, rge), fromAtLeast(c.n, ige)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	return out, nil
}

// accumulate rolls the rows of every part up into s: sums, means and the
// latency histograms' percentiles.
func accumulate(s *query.Stats, parts [][]statRow) {
	hist := map[*query.Agg][]latCount{}
	for _, rows := range parts {
		for _, x := range rows {
			for _, up := range rollUp(s.By, x.lvl) {
				if a := agg(s, up, x.b, x.g); a != nil {
					x.sums.addTo(a)
					if x.lat.Valid {
						hist[a] = append(hist[a], latCount{x.lat.Float64, x.sums.n})
					}
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

// sums are a row of statsCounts.
type sums struct {
	n             int64
	fails, rw, im float64
	rb, ib        [query.DistBins]int64
}

// addTo adds c into a, its means as sums until eachAgg divides them.
func (c *sums) addTo(a *query.Agg) {
	a.Count += c.n
	a.Failures += int64(c.fails)
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

// col is the column c when the partition by has it, else the constant.
func col(by, c, none string) string {
	if strings.Contains(by, c) {
		return c
	}
	return none
}
