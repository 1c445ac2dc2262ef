package osindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"engram/query"
)

// Stats answers q with OpenSearch aggregations over the documents matching
// q.Expr whose timestamps are in [Since, Until), in at most two requests
// (the top groups first when split by a field). The percentiles are
// OpenSearch's t-digest estimates (Stats.Approximate); the rest is exact.
// The queries are in docs/opensearch.md (Stats).
func (r *Reader) Stats(ctx context.Context, q query.StatsQuery) (*query.Stats, error) {
	q, err := q.Resolve(r.now())
	if err != nil {
		return nil, err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return nil, err
	}
	scope := obj{"bool": obj{"filter": []any{
		translate(e, r.now(), r.tenant, false),
		rangeQ(fTimestamp, obj{"gte": q.Since.UnixMilli(), "lt": q.Until.UnixMilli(), "format": "epoch_millis"}),
	}}}
	var groups []string
	var split []obj
	if q.By != "" {
		if groups, err = r.statsGroups(ctx, scope, q); err != nil {
			return nil, err
		}
		split = groupFilters(q.By, groups)
	}
	s := query.NewStats(q, groups)
	s.Approximate = true
	bodies := statsBodies(q, scope, split)
	res, err := r.msearch(ctx, "stats", bodies)
	if err != nil {
		return nil, err
	}
	for i, rs := range res {
		if err := fillStats(s, rs.Aggregations, i == 0, len(split)); err != nil {
			return nil, r.fail("stats", err)
		}
	}
	return s, nil
}

// groupField is the keyword field of each split (ByOutcome has none).
var groupField = map[string]string{
	query.ByType:    fEventType,
	query.ByAgent:   fAgent,
	query.ByTool:    "tool",
	query.BySession: fSession,
	query.ByTenant:  fTenant,
	query.ByTag:     fTags,
}

// outcomeQuery is the query of each outcome group.
var outcomeQuery = map[string]obj{
	query.OutcomeOK:      term(fSuccess, true),
	query.OutcomeFailed:  term(fSuccess, false),
	query.OutcomeUnknown: obj{"bool": obj{"must_not": []any{exists(fSuccess)}}},
}

// groupShardSize is the shard_size of the terms aggregation that finds the
// top groups: its counts are exact when no shard holds more distinct values
// than this (always with one shard, engram's default).
const groupShardSize = 10000

// statsGroups finds the top q.Top groups of the documents of scope, most
// first, then GroupOther when some document is in none of them.
func (r *Reader) statsGroups(ctx context.Context, scope obj, q query.StatsQuery) ([]string, error) {
	var agg obj
	if q.By == query.ByOutcome {
		f := obj{}
		for name, oq := range outcomeQuery {
			f[name] = oq
		}
		agg = obj{"filters": obj{"filters": f}}
	} else {
		// A document without the field (or, but for tags, with "") is in
		// GroupNone: "" stands for it in the aggregation.
		missing := ""
		if q.By == query.ByTag {
			missing = query.GroupNone
		}
		agg = obj{"terms": obj{
			"field":      groupField[q.By],
			"size":       q.Top + 1,
			"shard_size": max(groupShardSize, q.Top+1),
			"missing":    missing,
			"order":      []any{obj{"_count": "desc"}, obj{"_key": "asc"}},
		}}
	}
	res, err := r.search(ctx, "stats", obj{"size": 0, "query": scope, "track_total_hits": false, "aggs": obj{"g": agg}})
	if err != nil {
		return nil, err
	}
	var ans struct {
		G struct {
			Buckets json.RawMessage `json:"buckets"`
		} `json:"g"`
	}
	if err := json.Unmarshal(res.Aggregations, &ans); err != nil {
		return nil, r.fail("stats", fmt.Errorf("reading the groups: %w", err))
	}
	counts := map[string]int64{}
	if q.By == query.ByOutcome {
		var bs map[string]struct {
			N int64 `json:"doc_count"`
		}
		if err := json.Unmarshal(ans.G.Buckets, &bs); err != nil {
			return nil, r.fail("stats", fmt.Errorf("reading the groups: %w", err))
		}
		for name, b := range bs {
			if b.N > 0 {
				counts[name] = b.N
			}
		}
	} else {
		var bs []struct {
			Key string `json:"key"`
			N   int64  `json:"doc_count"`
		}
		if err := json.Unmarshal(ans.G.Buckets, &bs); err != nil {
			return nil, r.fail("stats", fmt.Errorf("reading the groups: %w", err))
		}
		for _, b := range bs {
			if b.Key == "" && q.By != query.ByTag {
				b.Key = query.GroupNone
			}
			counts[b.Key] += b.N
		}
	}
	// The terms aggregation returns Top+1 groups at most: TopGroups keeps
	// Top and adds GroupOther when there is one more.
	return query.TopGroups(counts, q.Top), nil
}

// groupFilters is the query of each group, aligned with groups.
func groupFilters(by string, groups []string) []obj {
	out := make([]obj, len(groups))
	var top []string
	for i, g := range groups {
		if g == query.GroupOther {
			out[i] = otherQuery(by, top)
			continue
		}
		top = append(top, g)
		out[i] = groupQuery(by, g)
	}
	return out
}

// groupQuery is the documents of the group g split by by.
func groupQuery(by, g string) obj {
	if by == query.ByOutcome {
		return outcomeQuery[g]
	}
	f := groupField[by]
	if g != query.GroupNone {
		return term(f, g)
	}
	if by == query.ByTag {
		return obj{"bool": obj{"must_not": []any{exists(f)}}}
	}
	return obj{"bool": obj{"should": []any{term(f, ""), obj{"bool": obj{"must_not": []any{exists(f)}}}}, "minimum_should_match": 1}}
}

// otherTagsScript matches a document with a tag outside params.top, or
// without tags when params.none.
const otherTagsScript = `if (doc['tags'].size() == 0) { return params.none; }
for (def v : doc['tags']) { if (!params.top.contains(v)) { return true; } }
return false;`

// otherQuery is the documents in a group outside top: in none of them,
// for a field of one value a document; with a tag not among them (or
// without tags, when GroupNone is not among them), for tags, so that a
// document with two such tags counts once.
func otherQuery(by string, top []string) obj {
	if by == query.ByTag {
		var tags []string
		for _, g := range top {
			if g == query.GroupNone {
				continue
			}
			tags = append(tags, g)
		}
		none := len(tags) == len(top) // GroupNone is not a top group
		if tags == nil {
			tags = []string{}
		}
		return obj{"script": obj{"script": obj{"source": otherTagsScript, "lang": "painless",
			"params": obj{"top": tags, "none": none}}}}
	}
	not := make([]any, len(top))
	for i, g := range top {
		not[i] = groupQuery(by, g)
	}
	return obj{"bool": obj{"must_not": not}}
}

// decimalScript is a float field's value as the shortest decimal that
// rounds to it (0 without one).
func decimalScript(field string) obj {
	return obj{"source": fmt.Sprintf(`if (doc['%[1]s'].size() == 0) { return 0; } return Double.parseDouble(Float.toString((float) doc['%[1]s'].value));`, field),
		"lang": "painless"}
}

// binRanges are the query.DistBins bins of [0, 1] as ranges of a float
// field: each edge is the 32-bit float of k/DistBins, so a stored value is
// in the bin of the value written; below 0 is in the first, 1 and above
// in the last.
func binRanges() []any {
	out := make([]any, query.DistBins)
	edge := func(k int) float64 { return float64(float32(float64(k) / query.DistBins)) }
	for k := range query.DistBins {
		r := obj{}
		if k > 0 {
			r["from"] = edge(k)
		}
		if k < query.DistBins-1 {
			r["to"] = edge(k + 1)
		}
		out[k] = r
	}
	return out
}

const fReward = "reward_score"

// metricAggs are the metrics of one Agg.
func metricAggs() obj {
	return obj{
		"f":  obj{"filter": term(fSuccess, false)},
		"n":  obj{"value_count": obj{"field": fLatency}},
		"p":  obj{"percentiles": obj{"field": fLatency, "percents": []float64{50, 95, 99}, "keyed": false}},
		"rs": obj{"sum": obj{"script": decimalScript(fReward)}},
		"is": obj{"sum": obj{"script": decimalScript(fImportance)}},
		"rb": obj{"range": obj{"field": fReward, "missing": 0, "keyed": false, "ranges": binRanges()}},
		"ib": obj{"range": obj{"field": fImportance, "missing": 0, "keyed": false, "ranges": binRanges()}},
	}
}

// metricBuckets is how many aggregation buckets metricAggs makes (toward
// search.max_buckets).
const metricBuckets = 1 + 2*query.DistBins

// maxAggBuckets bounds the aggregation buckets of one search, under
// OpenSearch's default search.max_buckets (65,535).
const maxAggBuckets = 50000

// withGroups is metricAggs with the groups' filters under "g".
func withGroups(split []obj) obj {
	a := metricAggs()
	if len(split) > 0 {
		f := make(obj, len(split))
		for i, q := range split {
			f[strconv.Itoa(i)] = q
		}
		a["g"] = obj{"filters": obj{"filters": f}, "aggs": metricAggs()}
	}
	return a
}

// statsBodies are the searches of the answer: the histogram cut into as
// many as search.max_buckets needs, the first with the totals over the
// whole range.
func statsBodies(q query.StatsQuery, scope obj, split []obj) []map[string]any {
	every := q.Every.Milliseconds()
	since, until := q.Since.UnixMilli(), q.Until.UnixMilli()
	n := int64(q.NumBuckets())
	per := int64(1+metricBuckets) * int64(1+len(split)) // one histogram bucket
	chunk := max(1, maxAggBuckets/per)
	offset := since % every
	if offset < 0 {
		offset += every
	}
	var bodies []map[string]any
	for first := int64(0); first < n; first += chunk {
		lo := since + first*every
		hi := min(until, lo+chunk*every)
		hist := obj{"date_histogram": obj{
			"field":           fTimestamp,
			"fixed_interval":  fmt.Sprintf("%dms", every),
			"offset":          fmt.Sprintf("%dms", offset),
			"min_doc_count":   0,
			"format":          "epoch_millis",
			"extended_bounds": obj{"min": strconv.FormatInt(lo, 10), "max": strconv.FormatInt(hi-1, 10)},
		}, "aggs": withGroups(split)}
		aggs := obj{"h": hist}
		q := scope
		whole := lo == since && hi == until
		if first == 0 {
			// The totals: the documents of the search, or when it holds
			// part of the range only, every document of scope.
			if whole {
				aggs["all"] = obj{"filter": obj{"match_all": obj{}}, "aggs": obj{"in": obj{"filter": obj{"match_all": obj{}}, "aggs": withGroups(split)}}}
			} else {
				aggs["all"] = obj{"global": obj{}, "aggs": obj{"in": obj{"filter": scope, "aggs": withGroups(split)}}}
			}
		}
		if !whole {
			q = obj{"bool": obj{"filter": []any{scope, rangeQ(fTimestamp, obj{"gte": lo, "lt": hi, "format": "epoch_millis"})}}}
		}
		bodies = append(bodies, map[string]any{"size": 0, "query": q, "track_total_hits": false, "aggs": aggs})
	}
	return bodies
}

// The answer of the aggregations.
type (
	aggMetrics struct {
		N int64 `json:"doc_count"`
		F struct {
			N int64 `json:"doc_count"`
		} `json:"f"`
		LatN struct {
			Value int64 `json:"value"`
		} `json:"n"`
		P struct {
			Values []struct {
				Key   float64  `json:"key"`
				Value *float64 `json:"value"`
			} `json:"values"`
		} `json:"p"`
		RS, IS struct {
			Value float64 `json:"value"`
		} // "rs", "is"
		RB, IB struct {
			Buckets []struct {
				N int64 `json:"doc_count"`
			} `json:"buckets"`
		} // "rb", "ib"
		G *struct {
			Buckets map[string]aggMetrics `json:"buckets"`
		} `json:"g"`
	}
	aggBucket struct {
		aggMetrics
		Key int64 `json:"key"`
	}
)

func (m *aggMetrics) agg() (query.Agg, error) {
	a := query.Agg{Count: m.N, Failures: m.F.N}
	if m.N == 0 {
		return a, nil
	}
	a.Reward.Mean, a.Importance.Mean = m.RS.Value/float64(m.N), m.IS.Value/float64(m.N)
	if len(m.RB.Buckets) != query.DistBins || len(m.IB.Buckets) != query.DistBins {
		return a, fmt.Errorf("unexpected bins: %d and %d", len(m.RB.Buckets), len(m.IB.Buckets))
	}
	for i := range query.DistBins {
		a.Reward.Bins[i], a.Importance.Bins[i] = m.RB.Buckets[i].N, m.IB.Buckets[i].N
	}
	if a.Latency.N = m.LatN.Value; a.Latency.N > 0 {
		for _, v := range m.P.Values {
			if v.Value == nil || math.IsNaN(*v.Value) {
				continue
			}
			switch v.Key {
			case 50:
				a.Latency.P50 = *v.Value
			case 95:
				a.Latency.P95 = *v.Value
			case 99:
				a.Latency.P99 = *v.Value
			}
		}
	}
	return a, nil
}

// groupAggs fills dst (aligned with the groups) from m's "g".
func (m *aggMetrics) groupAggs(dst []query.Agg) error {
	if len(dst) == 0 {
		return nil
	}
	if m.G == nil {
		return fmt.Errorf("the answer lacks the groups")
	}
	for i := range dst {
		b, ok := m.G.Buckets[strconv.Itoa(i)]
		if !ok {
			return fmt.Errorf("the answer lacks group %d", i)
		}
		a, err := b.agg()
		if err != nil {
			return err
		}
		dst[i] = a
	}
	return nil
}

// fillStats fills s from the aggregations of one search; totals: it holds
// the totals over the range.
func fillStats(s *query.Stats, raw json.RawMessage, totals bool, groups int) error {
	var ans struct {
		H struct {
			Buckets []aggBucket `json:"buckets"`
		} `json:"h"`
		All *struct {
			In *aggMetrics `json:"in"`
		} `json:"all"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("reading the aggregations: %w", err)
	}
	for _, b := range ans.H.Buckets {
		i := s.BucketOf(b.Key)
		if i < 0 {
			continue // extended_bounds may reach past the range
		}
		a, err := b.agg()
		if err != nil {
			return err
		}
		s.Buckets[i].All = a
		if err := b.groupAggs(s.Buckets[i].Groups); err != nil {
			return err
		}
	}
	if !totals {
		return nil
	}
	if ans.All == nil || ans.All.In == nil {
		return fmt.Errorf("the answer lacks the totals")
	}
	a, err := ans.All.In.agg()
	if err != nil {
		return err
	}
	s.All = a
	return ans.All.In.groupAggs(s.Total)
}
