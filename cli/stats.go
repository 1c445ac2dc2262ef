package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"engram/query"
	"engram/query/expr"
)

type statsOpts struct {
	queryOpts
	since, until, every, by string
	top                     int
	compare                 string // stats_compare.go
}

func statsFlags(e *env) (*flag.FlagSet, *statsOpts) {
	o := &statsOpts{}
	fs := newFlagSet("stats", e)
	o.common.bind(fs)
	fs.BoolVar(&o.json, "json", false, "machine output: one JSON object (docs/stats.md)")
	fs.StringVar(&o.since, "since", "24h", "start of the range: a duration back from now (24h, 7d) or a time (2026-05-08, 2026-05-08T10:00:00Z)")
	fs.StringVar(&o.until, "until", "", "end of the range, as --since (default: now)")
	fs.StringVar(&o.every, "every", "", "bucket width (1m, 15m, 1h, 1d; default: from the range, at most 60 buckets)")
	fs.StringVar(&o.by, "by", "", "split by a field: "+strings.Join(query.StatsFields, ", "))
	fs.IntVar(&o.top, "top", query.DefaultTop, "with --by: the groups kept, most frequent first; the rest are \""+query.GroupOther+"\"")
	fs.StringVar(&o.compare, "compare", "", "compare instead: 'previous' (the range against the one as long before it), FROM/TO (another range against this one), or with --by two values A,B of the field (docs/stats.md)")
	return fs, o
}

// runStats prints the shape of the stream over time.
func runStats(ctx context.Context, e *env, args []string) error {
	fs, o := statsFlags(e)
	r, err := openCommandReader(e, fs, &o.queryOpts, args, func(int) bool { return true }, "", true)
	if err != nil {
		return err
	}
	defer r.Close()
	sr, ok := r.(query.StatsReader)
	if !ok {
		return fmt.Errorf("stats: this index cannot aggregate")
	}
	q, err := o.statsQuery(exprArg(fs.Args()), time.Now())
	if err != nil {
		return err
	}
	if o.compare != "" {
		return runStatsCompare(ctx, e, sr, q, o)
	}
	s, err := sr.Stats(ctx, q)
	if err != nil {
		return exprError(e, q.Expr, err)
	}
	if o.json {
		return writeJSON(e.stdout, statsJSON(s))
	}
	if s.All.Count == 0 {
		fmt.Fprintf(e.stderr, "no events between %s and %s\n", localTime(s.Since), localTime(s.Until))
		return nil
	}
	if isTerminal(e) {
		return writeStatsTable(e.stdout, s, termWidth(e))
	}
	return writeStatsPlain(e.stdout, s)
}

// statsQuery checks the flags and makes the query at now; each mistake is
// one line naming the flag.
func (o *statsOpts) statsQuery(src string, now time.Time) (query.StatsQuery, error) {
	q := query.StatsQuery{Expr: src, By: o.by, Top: o.top}
	since, err := expr.ParseTime(o.since)
	if err != nil {
		return q, fmt.Errorf("stats: --since %w", err)
	}
	q.Since = since.Resolve(now)
	if q.Since.IsZero() { // the query's "not given"
		return q, fmt.Errorf("stats: --since %q: want a time after 0001-01-01T00:00:00Z", o.since)
	}
	q.Until = now
	if o.until != "" {
		until, err := expr.ParseTime(o.until)
		if err != nil {
			return q, fmt.Errorf("stats: --until %w", err)
		}
		q.Until = until.Resolve(now)
		if q.Until.IsZero() {
			return q, fmt.Errorf("stats: --until %q: want a time after 0001-01-01T00:00:00Z", o.until)
		}
	}
	if o.every != "" {
		if q.Every, err = expr.ParseDuration(o.every); err != nil {
			return q, fmt.Errorf("stats: --every %w", err)
		}
		if q.Every <= 0 {
			return q, fmt.Errorf("stats: --every %s: want a duration above zero", o.every)
		}
	}
	if o.top < 1 {
		return q, fmt.Errorf("stats: --top %d: want 1 or more", o.top)
	}
	if q, err = q.Resolve(now); err != nil {
		msg := strings.Replace(err.Error(), "stats: by ", "stats: --by ", 1)
		if every := "stats: every " + q.Every.String() + " "; o.every != "" {
			msg = strings.Replace(msg, every, "stats: --every "+o.every+" ", 1)
		} else {
			msg = strings.Replace(msg, every, "stats: the default bucket "+spanText(q.Every)+" ", 1)
		}
		return q, errors.New(msg)
	}
	return q, nil
}

// statsRow is the table row of one group over the range.
func statsRow(name string, a query.Agg) []string {
	lat := func(v float64) string {
		if a.Latency.N == 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return []string{name, strconv.FormatInt(a.Count, 10), strconv.FormatInt(a.Failures, 10),
		strconv.FormatFloat(100*a.FailureRate(), 'f', 1, 64) + "%",
		lat(a.Latency.P50), lat(a.Latency.P95), lat(a.Latency.P99),
		strconv.FormatFloat(a.Reward.Mean, 'f', 2, 64), strconv.FormatFloat(a.Importance.Mean, 'f', 2, 64)}
}

var statsHeader = []string{"GROUP", "EVENTS", "FAILED", "FAIL%", "P50ms", "P95ms", "P99ms", "REWARD", "IMP"}

// statsTitle says what was aggregated.
func statsTitle(s *query.Stats) string {
	t := fmt.Sprintf("%s to %s, every %s", localTime(s.Since), localTime(s.Until), spanText(s.Every))
	if s.By != "" {
		t += ", by " + s.By
	}
	if s.Approximate {
		t += " (latency percentiles approximate)"
	}
	return t
}

// writeStatsTable is the terminal's table: a row a group and the whole,
// each with its counts over time as a sparkline.
func writeStatsTable(w io.Writer, s *query.Stats, width int) error {
	fmt.Fprintln(w, statsTitle(s))
	rows := [][]string{append(append([]string{}, statsHeader...), "EVENTS OVER TIME")}
	spark := func(count func(query.Bucket) int64) string {
		vs := make([]int64, len(s.Buckets))
		for i, b := range s.Buckets {
			vs[i] = count(b)
		}
		return sparkline(vs)
	}
	for g, name := range s.Groups {
		rows = append(rows, append(statsRow(name, s.Total[g]), spark(func(b query.Bucket) int64 { return b.Groups[g].Count })))
	}
	rows = append(rows, append(statsRow("all", s.All), spark(func(b query.Bucket) int64 { return b.All.Count })))
	return writeTable(w, rows, width, false)
}

// writeStatsPlain is the pipe's text: a line a bucket and group with
// events, for grep and awk; the whole range last.
func writeStatsPlain(w io.Writer, s *query.Stats) error {
	fmt.Fprintln(w, "# "+statsTitle(s))
	rows := [][]string{append([]string{"BUCKET"}, statsHeader...)}
	for _, b := range s.Buckets {
		start := b.Start.UTC().Format(time.RFC3339)
		if b.All.Count > 0 {
			rows = append(rows, append([]string{start}, statsRow("all", b.All)...))
		}
		for g, name := range s.Groups {
			if b.Groups[g].Count > 0 {
				rows = append(rows, append([]string{start}, statsRow(name, b.Groups[g])...))
			}
		}
	}
	return writeTable(w, rows, 1<<20, false)
}

// sparkBlocks are the eight heights of a sparkline; a bucket with nothing
// is a space so that gaps stand out.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws vs scaled to their maximum, one glyph each.
func sparkline(vs []int64) string {
	var top int64
	for _, v := range vs {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range vs {
		switch {
		case v <= 0:
			b.WriteByte(' ')
		default:
			b.WriteRune(sparkBlocks[min(len(sparkBlocks)-1, int((v*int64(len(sparkBlocks))-1)/top))])
		}
	}
	return b.String()
}

// spanText is a bucket width as people say it: 1d, 6h, 15m, else Go's.
func spanText(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{7 * 24 * time.Hour, "w"}, {24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if d >= u.d && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return d.String()
}
