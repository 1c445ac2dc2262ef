package querytest

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"engram/query"
)

// testStats checks Stats against query.StatsOf over the matching
// documents: every count, failure and distribution exactly, means to
// rounding, percentiles exactly where the backend says they are exact.
func (s *suite) testStats(t *testing.T) {
	sr, ok := s.all.(query.StatsReader)
	if !ok {
		t.Fatalf("%T does not answer Stats", s.all)
	}
	now := time.Now()
	until := now.Truncate(time.Hour).Add(time.Hour)
	cases := []query.StatsQuery{
		{Since: until.Add(-72 * time.Hour), Until: until},
		{Since: until.Add(-72 * time.Hour), Until: until, Every: 3 * time.Hour, By: query.ByAgent},
		{Since: until.Add(-24 * time.Hour), Until: until, By: query.ByOutcome, Top: 2},
		{Since: until.Add(-48 * time.Hour), Until: until, By: query.ByTag, Top: 2},
		{Since: until.Add(-48 * time.Hour), Until: until, Every: 90 * time.Minute, By: query.ByType, Top: 3},
		{Since: until.Add(-72 * time.Hour), Until: until, By: query.ByTool, Expr: "success:false"},
		{Since: until.Add(-72 * time.Hour), Until: until, By: query.BySession, Expr: "agent:agent-a latency>=0"},
		{Since: until.Add(-72 * time.Hour), Until: until, By: query.ByTenant, Expr: topWord},
		{Since: until.Add(-72 * time.Hour), Until: until, Every: 6 * time.Hour, By: query.ByAgent, Expr: "-tag:demo importance>=0.3"},
		{Since: until.Add(-30 * time.Minute), Until: until, Expr: "type:nothing_at_all_matches"},
	}
	for _, q := range cases {
		name := fmt.Sprintf("%s by %q top %d every %s", q.Expr, q.By, q.Top, q.Every)
		t.Run(name, func(t *testing.T) {
			if q.Expr == "type:nothing_at_all_matches" {
				q.Expr = "id:no-such-event"
			}
			got, err := sr.Stats(s.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			rq, err := q.Resolve(now)
			if err != nil {
				t.Fatal(err)
			}
			want := query.StatsOf(rq, filter(s.docs, mustParse(t, q.Expr), now))
			if msg := sameStats(got, want); msg != "" {
				t.Fatal(msg)
			}
		})
	}
	if _, err := sr.Stats(s.ctx, query.StatsQuery{Expr: "latency>", Since: now.Add(-time.Hour)}); err == nil {
		t.Error("a bad expression gave no error")
	}
	if _, err := sr.Stats(s.ctx, query.StatsQuery{By: "colour"}); err == nil {
		t.Error("by colour gave no error")
	}
}

// SameStats is "" when got answers as want does (percentiles only in
// order when got.Approximate), else the first difference: for a backend's
// own tests beyond the suite.
func SameStats(got, want *query.Stats) string { return sameStats(got, want) }

// sameStats is "" when got answers as want does, else the first difference.
func sameStats(got, want *query.Stats) string {
	switch {
	case !slices.Equal(got.Groups, want.Groups):
		return fmt.Sprintf("groups %q, want %q", got.Groups, want.Groups)
	case len(got.Buckets) != len(want.Buckets):
		return fmt.Sprintf("%d buckets, want %d", len(got.Buckets), len(want.Buckets))
	case got.Every != want.Every || !got.Since.Equal(want.Since):
		return fmt.Sprintf("buckets of %s from %s, want %s from %s", got.Every, got.Since, want.Every, want.Since)
	}
	if msg := sameAgg("all", got.All, want.All, got.Approximate); msg != "" {
		return msg
	}
	for g := range want.Groups {
		if msg := sameAgg("total "+want.Groups[g], got.Total[g], want.Total[g], got.Approximate); msg != "" {
			return msg
		}
	}
	for i, wb := range want.Buckets {
		gb := got.Buckets[i]
		if !gb.Start.Equal(wb.Start) {
			return fmt.Sprintf("bucket %d starts %s, want %s", i, gb.Start, wb.Start)
		}
		if msg := sameAgg(fmt.Sprintf("bucket %s", wb.Start.Format(time.RFC3339)), gb.All, wb.All, got.Approximate); msg != "" {
			return msg
		}
		for g := range want.Groups {
			if msg := sameAgg(fmt.Sprintf("bucket %s group %s", wb.Start.Format(time.RFC3339), want.Groups[g]), gb.Groups[g], wb.Groups[g], got.Approximate); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func sameAgg(where string, got, want query.Agg, approx bool) string {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	switch {
	case got.Count != want.Count || got.Failures != want.Failures:
		return fmt.Sprintf("%s: %d documents, %d failed; want %d, %d", where, got.Count, got.Failures, want.Count, want.Failures)
	case got.Reward.Bins != want.Reward.Bins || got.Importance.Bins != want.Importance.Bins:
		return fmt.Sprintf("%s: reward bins %v importance %v; want %v, %v", where, got.Reward.Bins, got.Importance.Bins, want.Reward.Bins, want.Importance.Bins)
	case !near(got.Reward.Mean, want.Reward.Mean) || !near(got.Importance.Mean, want.Importance.Mean):
		return fmt.Sprintf("%s: reward mean %v importance %v; want %v, %v", where, got.Reward.Mean, got.Importance.Mean, want.Reward.Mean, want.Importance.Mean)
	case got.Latency.N != want.Latency.N:
		return fmt.Sprintf("%s: %d latencies, want %d", where, got.Latency.N, want.Latency.N)
	case !approx && got.Latency != want.Latency:
		return fmt.Sprintf("%s: latency %+v, want %+v", where, got.Latency, want.Latency)
	case approx && !(got.Latency.P50 <= got.Latency.P95 && got.Latency.P95 <= got.Latency.P99):
		return fmt.Sprintf("%s: latency percentiles out of order: %+v", where, got.Latency)
	}
	return ""
}
