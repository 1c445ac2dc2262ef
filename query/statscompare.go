package query

import (
	"fmt"
	"math"
)

// minCompare is how many documents each side needs before a comparison
// of their rates and percentiles says more than noise.
const minCompare = 20

// Change is one measure of two sets of documents, A and B.
type Change struct {
	Measure string
	A, B    float64
	// Known: both sides have the measure (a latency needs documents with
	// one).
	Known bool
	// Delta is B - A; Rel is Delta over A (NaN when A is 0).
	Delta, Rel float64
	// Worse: the change goes the way nobody wants (more failures, slower,
	// less reward); Better the other way. Neither for counts and
	// importance, and for no change.
	Worse, Better bool
}

// The measures CompareAggs lists, in order.
const (
	MeasureEvents      = "events"
	MeasureFailureRate = "failure rate"
	MeasureP50         = "latency p50"
	MeasureP95         = "latency p95"
	MeasureP99         = "latency p99"
	MeasureReward      = "reward mean"
	MeasureImportance  = "importance mean"
)

// CompareAggs lists how b differs from a, measure by measure, and says
// why the comparison is too small to trust ("" when it is not).
func CompareAggs(a, b Agg) (changes []Change, tooSmall string) {
	both := a.Latency.N > 0 && b.Latency.N > 0
	type m struct {
		name  string
		a, b  float64
		known bool
		sign  int // +1: up is worse, -1: up is better, 0: neither
	}
	for _, x := range []m{
		{MeasureEvents, float64(a.Count), float64(b.Count), true, 0},
		{MeasureFailureRate, a.FailureRate(), b.FailureRate(), a.Count > 0 && b.Count > 0, 1},
		{MeasureP50, a.Latency.P50, b.Latency.P50, both, 1},
		{MeasureP95, a.Latency.P95, b.Latency.P95, both, 1},
		{MeasureP99, a.Latency.P99, b.Latency.P99, both, 1},
		{MeasureReward, a.Reward.Mean, b.Reward.Mean, a.Count > 0 && b.Count > 0, -1},
		{MeasureImportance, a.Importance.Mean, b.Importance.Mean, a.Count > 0 && b.Count > 0, 0},
	} {
		c := Change{Measure: x.name, A: x.a, B: x.b, Known: x.known}
		if x.known {
			c.Delta = x.b - x.a
			c.Rel = math.NaN()
			if x.a != 0 {
				c.Rel = c.Delta / x.a
			}
			up := c.Delta > 0
			c.Worse = x.sign != 0 && c.Delta != 0 && up == (x.sign > 0)
			c.Better = x.sign != 0 && c.Delta != 0 && !c.Worse
		}
		changes = append(changes, c)
	}
	switch {
	case a.Count < minCompare && b.Count < minCompare:
		tooSmall = fmt.Sprintf("too small to compare: A has %d events and B %d, under %d each", a.Count, b.Count, minCompare)
	case a.Count < minCompare:
		tooSmall = fmt.Sprintf("too small to compare: A has %d events, under %d", a.Count, minCompare)
	case b.Count < minCompare:
		tooSmall = fmt.Sprintf("too small to compare: B has %d events, under %d", b.Count, minCompare)
	}
	return changes, tooSmall
}
