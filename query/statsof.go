package query

import (
	"slices"

	"engram/model"
)

// StatsOf is Stats by brute force over docs, those already matching the
// expression: the reference the backends are checked against, and the
// answer of a reader that holds its documents in memory. q is resolved.
func StatsOf(q StatsQuery, docs []*model.IndexDoc) *Stats {
	counts := map[string]int64{}
	var in []*model.IndexDoc
	for _, d := range docs {
		if ms := docMillis(d); ms >= q.Since.UnixMilli() && ms < q.Until.UnixMilli() {
			in = append(in, d)
			for _, g := range groupsOf(q.By, d) {
				counts[g]++
			}
		}
	}
	var groups []string
	if q.By != "" {
		groups = TopGroups(counts, q.Top)
	}
	s := NewStats(q, groups)
	type key struct{ b, g int } // g -1: the bucket's All
	sets := map[key][]*model.IndexDoc{}
	total := make([][]*model.IndexDoc, len(groups))
	for _, d := range in {
		b := s.BucketOf(docMillis(d))
		sets[key{b, -1}] = append(sets[key{b, -1}], d)
		var seen []int
		for _, name := range groupsOf(q.By, d) {
			g := s.GroupIndex(name)
			if q.By == "" || slices.Contains(seen, g) { // two tags past the top: once in other
				continue
			}
			seen = append(seen, g)
			sets[key{b, g}] = append(sets[key{b, g}], d)
			total[g] = append(total[g], d)
		}
	}
	for k, ds := range sets {
		if k.g < 0 {
			s.Buckets[k.b].All = aggOf(ds)
		} else {
			s.Buckets[k.b].Groups[k.g] = aggOf(ds)
		}
	}
	for g, ds := range total {
		s.Total[g] = aggOf(ds)
	}
	s.All = aggOf(in)
	return s
}

// groupsOf is the group names of d split by field by: one, or for tags
// one a tag; GroupNone when d has none. "" is no split: one group, "".
func groupsOf(by string, d *model.IndexDoc) []string {
	one := func(v string) []string {
		if v == "" {
			return []string{GroupNone}
		}
		return []string{v}
	}
	switch by {
	case ByType:
		return one(d.EventType)
	case ByAgent:
		return one(d.AgentID)
	case ByTool:
		return one(d.Tool)
	case BySession:
		return one(d.SessionID)
	case ByTenant:
		return one(d.TenantID)
	case ByOutcome:
		return []string{outcome(d.Success)}
	case ByTag:
		if len(d.Tags) == 0 {
			return []string{GroupNone}
		}
		return slices.Compact(slices.Sorted(slices.Values(d.Tags)))
	}
	return []string{""}
}

// outcome is the outcome group of a success value.
func outcome(success *bool) string {
	switch {
	case success == nil:
		return OutcomeUnknown
	case *success:
		return OutcomeOK
	}
	return OutcomeFailed
}

// aggOf is the Agg of docs.
func aggOf(docs []*model.IndexDoc) Agg {
	var a Agg
	var lat []float64
	var rw, im float64
	for _, d := range docs {
		a.Count++
		if d.Success != nil && !*d.Success {
			a.Failures++
		}
		if d.LatencyMs != nil {
			lat = append(lat, float64(*d.LatencyMs))
		}
		rw += d.RewardScore
		im += d.ImportanceScore
		a.Reward.Bins[bin(d.RewardScore)]++
		a.Importance.Bins[bin(d.ImportanceScore)]++
	}
	if a.Count > 0 {
		a.Reward.Mean, a.Importance.Mean = rw/float64(a.Count), im/float64(a.Count)
	}
	slices.Sort(lat)
	if n := int64(len(lat)); n > 0 {
		a.Latency = Percentiles{N: n, P50: lat[Rank(50, n)-1], P95: lat[Rank(95, n)-1], P99: lat[Rank(99, n)-1]}
	}
	return a
}

func docMillis(d *model.IndexDoc) int64 {
	t, err := model.ParseTimestamp(d.Timestamp)
	if err != nil {
		return -1
	}
	return t.UnixMilli()
}
