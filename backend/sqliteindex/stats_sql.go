package sqliteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"engram/query"
)

// statsIndex covers what Stats reads of a document, so that a month of a
// million documents is aggregated from the index alone, never from the
// wide rows (their summaries, JSON and embeddings). It holds the tallies'
// values, computed once when a document is written: Stats names the same
// expressions, which SQLite then reads from the index.
var statsIndex = `CREATE INDEX docs_stats ON docs(ts_unix_ms, event_type, agent_id, tool, tenant_id, success, latency_ms, reward_score, importance_score, ` +
	strings.Join(tallyExprs(), ", ") + `)`

// tallyLane is the width of one counter in a tally column: two lanes fit
// an INTEGER, and a sum of them does not carry from one lane into the next
// below 2^31 documents.
const tallyLane = 31

// tallyCounters are the 0/1 facts of a document Stats counts besides the
// document itself: failed, and for reward and importance whether it is at
// or past each bin's lower edge but the first (compared as query's bin
// computes them, col × DistBins against k; fromAtLeast makes bins of them).
// Summing a column that packs two of them is one aggregate step a row
// where a sum each was two, and the aggregate steps were most of the
// time of a month's statistics.
func tallyCounters() []string {
	c := []string{"success IS 0"}
	for _, col := range []string{"reward_score", "importance_score"} {
		for k := 1; k < query.DistBins; k++ {
			c = append(c, fmt.Sprintf("%s * %d >= %d", col, query.DistBins, k))
		}
	}
	return c
}

// tallyExprs are the tally columns' expressions: counters 2i and 2i+1 in
// the low and high lane of column i.
func tallyExprs() []string {
	c := tallyCounters()
	var e []string
	for i := 0; i < len(c); i += 2 {
		x := "(" + c[i] + ")"
		if i+1 < len(c) {
			x += fmt.Sprintf(" + ((%s) << %d)", c[i+1], tallyLane)
		}
		e = append(e, x)
	}
	return e
}

// tallies are the tally columns' names in the statements, t1, t2, ...
func tallies() []string { return numbered("t", len(tallyExprs())) }

func numbered(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i+1)
	}
	return names
}

// ensureTally makes docs_stats the one of statsIndex, in place of one
// written by an engram whose index held other columns.
func ensureTally(ctx context.Context, tx *sql.Tx) error {
	var def string
	err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'docs_stats'").Scan(&def)
	switch {
	case err == nil && def == statsIndex:
		return nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("stats index: %w", err)
	}
	for _, s := range []string{`DROP INDEX IF EXISTS docs_stats`, statsIndex} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("stats index: %w", err)
		}
	}
	return nil
}

// hasIndex: the index name exists (an index written by an older engram
// may lack one until a writer opens it).
func (r *Reader) hasIndex(ctx context.Context, name string) bool {
	var n int
	err := r.q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?", name).Scan(&n)
	return err == nil && n > 0
}

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
	t := tallyExprs()
	for i := range t {
		t[i] += " AS " + tallies()[i]
	}
	return fmt.Sprintf("SELECT d.seq AS seq, %s AS g, d.ts_unix_ms AS ts, d.latency_ms AS lat, d.reward_score AS rw, d.importance_score AS im, %s FROM %s WHERE %s",
		groupSQL[q.By], strings.Join(t, ", "), from, w), args
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

// statsWith is the WITH clause of the statements over part of the range
// of q: m, the documents with their bucket b and their group g past the
// top as other (once each per group), and m1, each document once.
func statsWith(p *plan, q, part query.StatsQuery, groups []string, covered bool) (string, []any) {
	from, args := statsFrom(p, part, covered)
	g := "g"
	var gargs []any
	if len(groups) > 0 && groups[len(groups)-1] == query.GroupOther {
		top := groups[:len(groups)-1]
		g = "CASE WHEN g IN (?" + strings.Repeat(",?", len(top)-1) + ") THEN g ELSE '" + query.GroupOther + "' END"
		for _, t := range top {
			gargs = append(gargs, t)
		}
	}
	cols := "lat, rw, im, " + strings.Join(tallies(), ", ")
	// Split by tag, a document is a row a tag (two tags past the top: two
	// rows of other, made one by DISTINCT), and m1 holds it once; else
	// both are the documents, and m1 is m.
	distinct, materialized, m1 := "", "", "m1 AS (SELECT * FROM m) "
	if q.By == query.ByTag {
		distinct, materialized, m1 = "DISTINCT ", "MATERIALIZED ", "m1 AS MATERIALIZED (SELECT DISTINCT seq, b, '' AS g, "+cols+" FROM m) "
	}
	sql := "WITH m AS " + materialized + "(SELECT " + distinct + "seq, (ts - ?) / ? AS b, " + g + " AS g, " + cols + " FROM (" + from + ")), " + m1
	return sql, append(append([]any{q.Since.UnixMilli(), q.Every.Milliseconds()}, gargs...), args...)
}

// statsLevels are the levels the statements sum at: the finest each
// document is counted once in; the coarser ones are sums of it
// (accumulate). Split by tag a document may be in several groups of a
// bucket, so the buckets' own rows come from m1.
func statsLevels(by string) []int {
	switch by {
	case "":
		return []int{lvlBucket}
	case query.ByTag:
		return []int{lvlBucketGroup, lvlBucket}
	}
	return []int{lvlBucketGroup}
}

// sumSQL sums the documents of each bucket and group; of one bucket not
// split by a field, a streaming aggregate with no sort.
func sumSQL(by, with string, buckets bool) string {
	return partSQL(by, with, buckets, "count(*), total(rw), total(im), sum("+strings.Join(tallies(), "), sum(")+")", "", "")
}

// latSQL counts the documents of each latency, bucket and group.
func latSQL(by, with string, buckets bool) string {
	return partSQL(by, with, buckets, "lat, count(*)", " WHERE lat IS NOT NULL", "lat")
}

// partSQL selects, at each level of statsLevels, the level, the bucket,
// the group and cols, grouped by the bucket when the part has several
// (else any row's b is the one bucket's), the group and by.
func partSQL(by, with string, buckets bool, cols, where, groupBy string) string {
	sel := make([]string, 0, 2)
	for _, lvl := range statsLevels(by) {
		l := levels[lvl]
		keys := groupBy
		if strings.Contains(l.by, "g") {
			keys = strings.Trim("g, "+keys, ", ")
		}
		if buckets {
			keys = strings.Trim("b, "+keys, ", ")
		}
		if keys != "" {
			keys = " GROUP BY " + keys
		}
		sel = append(sel, fmt.Sprintf("SELECT %d, b, %s, %s FROM %s%s%s", lvl, col(l.by, "g", "''"), cols, l.src, where, keys))
	}
	return with + strings.Join(sel, " UNION ALL ")
}

// sumRow is a row of sumSQL: a level's sums for one bucket and group.
type sumRow struct {
	lvl  int
	b    int64
	g    string
	sums sums
}

// latRow is a row of latSQL.
type latRow struct {
	lvl int
	b   int64
	g   string
	latCount
}

// scanSum scans a row of sumSQL; an aggregate of no rows is not one.
func scanSum(rows *sql.Rows) (sumRow, bool, error) {
	var x sumRow
	var b sql.NullInt64
	c := &x.sums
	t := make([]sql.NullInt64, len(tallyExprs()))
	dest := []any{&x.lvl, &b, &x.g, &c.n, &c.rw, &c.im}
	for i := range t {
		dest = append(dest, &t[i])
	}
	if err := rows.Scan(dest...); err != nil || c.n == 0 {
		return x, false, err
	}
	x.b = b.Int64
	counters := untally(t)
	var rge, ige [query.DistBins - 1]int64
	copy(rge[:], counters[1:query.DistBins])
	copy(ige[:], counters[query.DistBins:])
	c.fails, c.rb, c.ib = counters[0], fromAtLeast(c.n, rge), fromAtLeast(c.n, ige)
	return x, true, nil
}

// untally splits summed tally columns into the sums of tallyCounters.
func untally(t []sql.NullInt64) []int64 {
	const mask = 1<<tallyLane - 1
	out := make([]int64, len(tallyCounters()))
	for i := range out {
		out[i] = t[i/2].Int64 >> (tallyLane * (i % 2)) & mask
	}
	return out
}

// fromAtLeast turns the counts atLeast[k-1], documents in bin k or past
// it, of n documents into the bins' counts.
func fromAtLeast(n int64, atLeast [query.DistBins - 1]int64) (bins [query.DistBins]int64) {
	prev := n
	for k := 1; k < query.DistBins; k++ {
		bins[k-1] = prev - atLeast[k-1]
		prev = atLeast[k-1]
	}
	bins[query.DistBins-1] = prev
	return bins
}

func scanLat(rows *sql.Rows) (latRow, bool, error) {
	var x latRow
	err := rows.Scan(&x.lvl, &x.b, &x.g, &x.lat, &x.n)
	return x, err == nil, err
}

// col is the column c when the partition by has it, else the constant.
func col(by, c, none string) string {
	if strings.Contains(by, c) {
		return c
	}
	return none
}
