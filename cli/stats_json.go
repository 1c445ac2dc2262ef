package cli

import (
	"os"
	"time"

	"github.com/charmbracelet/x/term"

	"engram/query"
)

// The JSON of engram stats; docs/stats.md describes it.
type (
	statsOut struct {
		Since        string        `json:"since"`
		Until        string        `json:"until"`
		EverySeconds float64       `json:"every_seconds"`
		By           string        `json:"by,omitempty"`
		Groups       []string      `json:"groups"`
		Approximate  bool          `json:"percentiles_approximate"`
		All          aggOut        `json:"all"`
		Totals       []groupOut    `json:"totals"`
		Buckets      []statsBucket `json:"buckets"`
	}
	statsBucket struct {
		Start string     `json:"start"`
		All   aggOut     `json:"all"`
		Group []groupOut `json:"groups"`
	}
	groupOut struct {
		Group string `json:"group"`
		aggOut
	}
	aggOut struct {
		Count       int64      `json:"count"`
		Failures    int64      `json:"failures"`
		FailureRate float64    `json:"failure_rate"`
		Latency     latencyOut `json:"latency_ms"`
		Reward      distOut    `json:"reward"`
		Importance  distOut    `json:"importance"`
	}
	latencyOut struct {
		N   int64    `json:"n"`
		P50 *float64 `json:"p50"`
		P95 *float64 `json:"p95"`
		P99 *float64 `json:"p99"`
	}
	distOut struct {
		Mean float64               `json:"mean"`
		Bins [query.DistBins]int64 `json:"bins"`
	}
)

func statsJSON(s *query.Stats) statsOut {
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	out := statsOut{Since: ts(s.Since), Until: ts(s.Until), EverySeconds: s.Every.Seconds(), By: s.By,
		Groups: append([]string{}, s.Groups...), Approximate: s.Approximate, All: aggJSON(s.All),
		Totals: groupsJSON(s.Groups, s.Total), Buckets: make([]statsBucket, len(s.Buckets))}
	for i, b := range s.Buckets {
		out.Buckets[i] = statsBucket{Start: ts(b.Start), All: aggJSON(b.All), Group: groupsJSON(s.Groups, b.Groups)}
	}
	return out
}

func groupsJSON(names []string, aggs []query.Agg) []groupOut {
	out := make([]groupOut, len(names))
	for i, n := range names {
		out[i] = groupOut{n, aggJSON(aggs[i])}
	}
	return out
}

// aggJSON leaves the percentiles null where no document had a latency.
func aggJSON(a query.Agg) aggOut {
	out := aggOut{Count: a.Count, Failures: a.Failures, FailureRate: a.FailureRate(),
		Latency: latencyOut{N: a.Latency.N},
		Reward:  distOut{a.Reward.Mean, a.Reward.Bins}, Importance: distOut{a.Importance.Mean, a.Importance.Bins}}
	if a.Latency.N > 0 {
		p50, p95, p99 := a.Latency.P50, a.Latency.P95, a.Latency.P99
		out.Latency.P50, out.Latency.P95, out.Latency.P99 = &p50, &p95, &p99
	}
	return out
}

// isTerminal: stdout is a terminal (not a pipe or a file).
func isTerminal(e *env) bool {
	f, ok := e.stdout.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
