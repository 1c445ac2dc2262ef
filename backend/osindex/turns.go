package osindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
)

// Turn is every event of one turn (the turn key of docs/data-contract.md,
// Turns and causal order, with its fallbacks) in causal order: phase, then
// timestamp (to the millisecond), then eventId. An unknown key is
// ErrNotFound.
func (r *Reader) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	op := "turn " + model.Quote(key)
	b := &boolQuery{filter: append(tenantQuery(r.tenant), turnQuery(key))}
	type ev struct {
		d  *model.IndexDoc
		ms int64
	}
	var evs []ev
	var after []json.RawMessage
	for {
		body := obj{
			"size":  maxWindow,
			"query": b.query(),
			"sort": []any{
				obj{fTimestamp: obj{"order": "asc", "numeric_type": "date"}},
				obj{fEventID: obj{"order": "asc"}},
			},
			"track_total_hits": false,
		}
		if after != nil {
			body["search_after"] = after
		}
		res, err := r.search(ctx, op, body)
		if err != nil {
			return nil, err
		}
		hits := res.Hits.Hits
		for i := range hits {
			h := &hits[i]
			d, err := r.decodeDoc(op, h)
			if err != nil {
				return nil, err
			}
			if len(h.Sort) != 2 {
				return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
			}
			ms, err := jsonInt64(h.Sort[0])
			if err != nil {
				return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
			}
			evs = append(evs, ev{d, ms})
		}
		if len(hits) < maxWindow {
			break
		}
		after = hits[len(hits)-1].Sort
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("turn %s: %w", model.Quote(key), backend.ErrNotFound)
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		if pa, pb := a.d.Phase(), b.d.Phase(); pa != pb {
			return int(pa) - int(pb)
		}
		if a.ms != b.ms {
			if a.ms < b.ms {
				return -1
			}
			return 1
		}
		return strings.Compare(a.d.EventID, b.d.EventID)
	})
	docs := make([]*model.IndexDoc, len(evs))
	for i, e := range evs {
		docs[i] = e.d
	}
	return docs, nil
}

// turnAcc is a turn's row and the position of its latest matching
// document (what orders the rows).
type turnAcc struct {
	query.TurnSummary
	latest pos
	// shown: the turn has a matching document at or above the cursor.
	shown bool
	// firstLacks: the turn's first document lacks one of firstFields.
	firstLacks bool
}

// Turns is one row per turn, newest first by the turn's latest matching
// document; a row sums up the whole turn of the reader's tenant, not only its
// matches. It walks the matches newest first until it has limit+1 turns not
// on earlier pages and sums them with one aggregation, so a page costs its
// turns' events, not the index.
func (r *Reader) Turns(ctx context.Context, s string, after query.Cursor, limit int) (query.TurnPage, error) {
	e, err := parse(s)
	if err != nil {
		return query.TurnPage{}, err
	}
	before, err := parsePos(after, kindTurns)
	if err != nil {
		return query.TurnPage{}, err
	}
	limit = pageLimit(limit, maxTurnsLimit)
	q := translate(e, r.now(), r.tenant, false)

	met := map[string]bool{}
	var out []*turnAcc
	walk := before
	chunk := min(4*(limit+1), maxWindow)
	for len(out) <= limit {
		// A few more keys than needed: turns met in the walk that were
		// shown on an earlier page (they straddle the cursor) drop out,
		// and another round would cost a walk and an aggregation.
		need := limit + 1 - len(out)
		need += max(2, need/8)
		chunk = max(chunk, min(4*need, maxWindow))
		ps, err := r.list(ctx, listing{op: "turns", query: q, desc: true, after: walk, size: chunk,
			source: false, docvalues: []string{fTurnID, fTraceID, fEventID}, bounded: true})
		if err != nil {
			return query.TurnPage{}, err
		}
		var keys []string
		latest := map[string]pos{} // the first met in the walk: the latest below the cursor
		n := 0
		for _, x := range ps {
			if len(keys) == need {
				break
			}
			n++
			p := x.pos
			walk = &p
			if k := hitTurnKey(x.hit); !met[k] {
				met[k] = true
				keys = append(keys, k)
				latest[k] = p
			}
		}
		if len(keys) > 0 {
			var shown obj
			if before != nil {
				shown = atOrAfter(*before)
			}
			accs, err := r.sumTurns(ctx, q, keys, shown)
			if err != nil {
				return query.TurnPage{}, err
			}
			for _, k := range keys {
				if a := accs[k]; a != nil && !a.shown {
					a.latest = latest[k]
					out = append(out, a)
				}
			}
		}
		if n == len(ps) && len(ps) < chunk {
			break // no more matching documents
		}
		chunk = min(2*chunk, maxWindow)
	}
	var p query.TurnPage
	for i, a := range out {
		if i == limit {
			p.Next = posCursor(kindTurns, out[limit-1].latest)
			break
		}
		p.Turns = append(p.Turns, a.TurnSummary)
	}
	return p, nil
}

// hitTurnKey is the turn key of a hit from its docvalue fields.
func hitTurnKey(h *hit) string {
	get := func(f string) string {
		if v := h.Fields[f]; len(v) > 0 {
			var s string
			if json.Unmarshal(v[0], &s) == nil {
				return s
			}
		}
		return ""
	}
	id := get(fEventID)
	if id == "" {
		id = h.ID
	}
	return model.TurnKey(get(fTurnID), get(fTraceID), id)
}

// atOrAfter matches the documents at or after p in ingestion order
// (ascending): K > p.k, or K = p.k and (_seq_no > p.seq, or _seq_no =
// p.seq and event_id >= p.id), K from the document's stream.
func atOrAfter(p pos) obj {
	on := func(key string) obj {
		eq := rangeQ(key, obj{"gte": p.k, "lte": p.k, "format": "epoch_millis"})
		return obj{"bool": obj{"should": []any{
			rangeQ(key, obj{"gt": p.k, "format": "epoch_millis"}),
			obj{"bool": obj{"filter": []any{eq, rangeQ("_seq_no", obj{"gt": p.seq})}}},
			obj{"bool": obj{"filter": []any{eq, term("_seq_no", p.seq), rangeQ(fEventID, obj{"gte": p.id})}}},
		}, "minimum_should_match": 1}}
	}
	return obj{"bool": obj{"should": []any{
		obj{"bool": obj{"filter": []any{exists(fIngestedAt), on(fIngestedAt)}}},
		obj{"bool": obj{"filter": []any{on(fTimestamp)}, "must_not": []any{exists(fIngestedAt)}}},
	}, "minimum_should_match": 1}}
}

// firstFields are the fields a row takes from the turn's first document
// (in ingestion order) that has one.
var firstFields = []string{fSession, fAgent, fTenant}

// top is a top_hits of one document of the stream (_source: source).
func top(s stream, desc bool, source any) obj {
	return obj{"top_hits": obj{"size": 1, "sort": s.sort(desc, false), "_source": source}}
}

func withoutIngestedAt(extra ...any) obj {
	return obj{"bool": obj{"filter": extra, "must_not": []any{exists(fIngestedAt)}}}
}

// turnAggs are the sub-aggregations of one turn's bucket, over all its
// documents: count, first and last timestamp, highest importance, failures
// and successes, total latency, the first document (of each stream) with
// the fields of firstFields, the first of each phase in time order (for
// the summary); and over its documents matching q: how many, and whether
// one matches shown (at or after the page's cursor; nil: none).
func turnAggs(q, shown obj) obj {
	m := obj{"filter": q}
	if shown != nil {
		m["aggs"] = obj{"shown": obj{"filter": shown}}
	}
	aggs := obj{
		"first":  obj{"min": obj{"field": fTimestamp}},
		"last":   obj{"max": obj{"field": fTimestamp}},
		"imp":    obj{"max": obj{"field": fImportance}},
		"failed": obj{"filter": term(fSuccess, false)},
		"ok":     obj{"filter": term(fSuccess, true)},
		"lat":    obj{"sum": obj{"field": fLatency}},
		"fa":     obj{"filter": exists(fIngestedAt), "aggs": obj{"h": top(streams[0], false, firstFields)}},
		"fb":     obj{"filter": withoutIngestedAt(), "aggs": obj{"h": top(streams[1], false, firstFields)}},
		"m":      m,
	}
	for ph, types := range phaseTypes() {
		aggs[fmt.Sprintf("p%d", ph)] = obj{"filter": types, "aggs": obj{"h": obj{"top_hits": obj{"size": 1,
			"sort": []any{
				obj{fTimestamp: obj{"order": "asc", "numeric_type": "date"}},
				obj{fEventID: obj{"order": "asc"}},
			}, "_source": []string{fSummary}}}}}
	}
	return aggs
}

// phaseTypes are, per phase (model.Phase, in causal order), a query of
// the documents of that phase by their event type: the observation phase
// holds every type the others do not (model.PhaseOf).
func phaseTypes() []obj {
	var byPhase [3][]string
	for _, t := range append(slices.Clone(model.EventTypes), model.TypeAction, model.TypeOutcome, model.TypeObservation) {
		if p := model.PhaseOf(t); p != model.PhaseObservation && !slices.Contains(byPhase[p], t) {
			byPhase[p] = append(byPhase[p], t)
		}
	}
	others := append(slices.Clone(byPhase[model.PhaseAction]), byPhase[model.PhaseOutcome]...)
	return []obj{
		{"bool": obj{"must_not": []any{obj{"terms": obj{fEventType: others}}}}},
		{"terms": obj{fEventType: byPhase[model.PhaseAction]}},
		{"terms": obj{fEventType: byPhase[model.PhaseOutcome]}},
	}
}

// fieldAggs find, per field of firstFields, the first document that has
// it (for the turns whose first document lacks one).
func fieldAggs() obj {
	aggs := obj{}
	for _, f := range firstFields {
		aggs["fa_"+f] = obj{"filter": obj{"bool": obj{"filter": []any{exists(f), exists(fIngestedAt)}}},
			"aggs": obj{"h": top(streams[0], false, []string{f})}}
		aggs["fb_"+f] = obj{"filter": withoutIngestedAt(exists(f)), "aggs": obj{"h": top(streams[1], false, []string{f})}}
	}
	return aggs
}

type aggValue struct {
	Value *json.Number `json:"value"`
}

type filteredHits struct {
	DocCount int64 `json:"doc_count"`
	H        struct {
		Hits struct {
			Hits []hit `json:"hits"`
		} `json:"hits"`
	} `json:"h"`
}

// one is the single hit of a filtered top_hits (nil without one).
func (f *filteredHits) one() *hit {
	if f == nil || len(f.H.Hits.Hits) == 0 {
		return nil
	}
	return &f.H.Hits.Hits[0]
}

// aggTurns runs a terms aggregation on the turn key over the documents
// matching q of the turns keys, with the sub-aggregations aggs, and
// returns the buckets by key.
func (r *Reader) aggTurns(ctx context.Context, q obj, keys []string, aggs obj) (map[string]map[string]json.RawMessage, error) {
	const op = "turns"
	body := obj{
		"size":             0,
		"track_total_hits": false,
		"query":            obj{"bool": obj{"filter": []any{q, turnQuery(keys...)}}},
		"aggs": obj{"t": obj{
			"terms": obj{"script": obj{"source": turnKeyScript, "lang": "painless"}, "size": len(keys)},
			"aggs":  aggs,
		}},
	}
	res, err := r.search(ctx, op, body)
	if err != nil {
		return nil, err
	}
	var ans struct {
		T struct {
			Buckets []map[string]json.RawMessage `json:"buckets"`
		} `json:"t"`
	}
	if err := json.Unmarshal(res.Aggregations, &ans); err != nil {
		return nil, r.fail(op, fmt.Errorf("aggregation answer: %w", err))
	}
	out := make(map[string]map[string]json.RawMessage, len(ans.T.Buckets))
	for _, b := range ans.T.Buckets {
		var key string
		if err := json.Unmarshal(b["key"], &key); err != nil {
			return nil, r.fail(op, fmt.Errorf("aggregation answer: key: %w", err))
		}
		out[key] = b
	}
	return out, nil
}

// sumTurns sums up the turns keys over all their documents (of the
// reader's tenant), by turn, leaving out the turns without a document
// matching q; shown matches the documents at or after the cursor of the
// page (nil on the first): a turn is shown when a matching one is.
func (r *Reader) sumTurns(ctx context.Context, q obj, keys []string, shown obj) (map[string]*turnAcc, error) {
	all := obj{"bool": obj{"filter": append(tenantQuery(r.tenant), obj{"match_all": obj{}})}}
	buckets, err := r.aggTurns(ctx, all, keys, turnAggs(q, shown))
	if err != nil {
		return nil, err
	}
	out := make(map[string]*turnAcc, len(buckets))
	var lacking []string
	for key, b := range buckets {
		a, err := turnRow(key, b)
		if err != nil {
			return nil, r.fail("turns", err)
		}
		if a == nil {
			continue // no match
		}
		out[key] = a
		if a.firstLacks && a.Events > 1 && !a.shown {
			lacking = append(lacking, key)
		}
	}
	if len(lacking) == 0 {
		return out, nil
	}
	// Turns whose first document lacks a field: the first that has it.
	buckets, err = r.aggTurns(ctx, all, lacking, fieldAggs())
	if err != nil {
		return nil, err
	}
	for key, b := range buckets {
		a := out[key]
		if a == nil {
			continue
		}
		for _, f := range firstFields {
			var best *pos
			value := ""
			for _, name := range []string{"fa_" + f, "fb_" + f} {
				var fh filteredHits
				if err := json.Unmarshal(b[name], &fh); err != nil {
					return nil, r.fail("turns", fmt.Errorf("aggregation answer: %s: %w", name, err))
				}
				h := fh.one()
				if h == nil {
					continue
				}
				p, err := hitPos(h, false)
				if err != nil {
					return nil, r.fail("turns", err)
				}
				if best == nil || cmpPos(p, *best) < 0 {
					best, value = &p, sourceString(h, f)
				}
			}
			a.set(f, value)
		}
	}
	return out, nil
}

func (a *turnAcc) set(field, value string) {
	switch field {
	case fSession:
		a.SessionID = value
	case fAgent:
		a.AgentID = value
	case fTenant:
		a.TenantID = value
	}
}

// sourceString is the string field f of a hit's _source ("" without).
func sourceString(h *hit, f string) string {
	var src map[string]any
	_ = json.Unmarshal(h.Source, &src)
	s, _ := src[f].(string)
	return s
}

// turnRow reads one bucket of sumTurns: nil when no document of the turn
// matches.
func turnRow(key string, b map[string]json.RawMessage) (*turnAcc, error) {
	var count int
	var first, last, imp, lat aggValue
	var failed, ok struct {
		DocCount int `json:"doc_count"`
	}
	var m struct {
		DocCount int64 `json:"doc_count"`
		Shown    *struct {
			DocCount int64 `json:"doc_count"`
		} `json:"shown"`
	}
	var fa, fb filteredHits
	var ph [3]filteredHits
	parts := map[string]any{"doc_count": &count, "first": &first, "last": &last,
		"imp": &imp, "failed": &failed, "ok": &ok, "lat": &lat, "fa": &fa, "fb": &fb, "m": &m,
		"p0": &ph[0], "p1": &ph[1], "p2": &ph[2]}
	for name, v := range parts {
		if err := json.Unmarshal(b[name], v); err != nil {
			return nil, fmt.Errorf("aggregation answer: %s: %w", name, err)
		}
	}
	if m.DocCount == 0 {
		return nil, nil
	}
	a := &turnAcc{TurnSummary: query.TurnSummary{Key: key, Events: count, AnyFailed: failed.DocCount > 0,
		Failures: failed.DocCount, Successes: ok.DocCount},
		shown: m.Shown != nil && m.Shown.DocCount > 0}
	if lat.Value != nil {
		f, err := strconv.ParseFloat(string(*lat.Value), 64)
		if err != nil {
			return nil, fmt.Errorf("aggregation answer: latency %s", *lat.Value)
		}
		a.LatencyMs = int64(math.Round(f))
	}
	for i := range ph {
		if h := ph[i].one(); h != nil {
			a.Summary = sourceString(h, fSummary)
			break
		}
	}
	var err error
	if a.First, err = msValue(first); err != nil {
		return nil, err
	}
	if a.Last, err = msValue(last); err != nil {
		return nil, err
	}
	if imp.Value != nil {
		f, err := strconv.ParseFloat(string(*imp.Value), 64)
		if err != nil {
			return nil, fmt.Errorf("aggregation answer: importance %s", *imp.Value)
		}
		a.MaxImportance = float32Decimal(f)
	}
	// The first document: the earlier of the two streams' first.
	var firstHit *hit
	var firstPos pos
	for _, f := range []*filteredHits{&fa, &fb} {
		if h := f.one(); h != nil {
			p, err := hitPos(h, false)
			if err != nil {
				return nil, err
			}
			if firstHit == nil || cmpPos(p, firstPos) < 0 {
				firstHit, firstPos = h, p
			}
		}
	}
	if firstHit == nil {
		return nil, fmt.Errorf("aggregation answer: turn %s without a first document", model.Quote(key))
	}
	for _, f := range firstFields {
		v := sourceString(firstHit, f)
		a.set(f, v)
		if v == "" {
			a.firstLacks = true
		}
	}
	return a, nil
}

// msValue is a min/max of a date field (epoch milliseconds, as a double).
func msValue(v aggValue) (time.Time, error) {
	if v.Value == nil {
		return time.Time{}, nil
	}
	f, err := strconv.ParseFloat(string(*v.Value), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, fmt.Errorf("aggregation answer: time %s", *v.Value)
	}
	return time.UnixMilli(int64(math.Round(f))).UTC(), nil
}

// float32Decimal is a float field's value (a float32 widened to double)
// as the shortest decimal that reads back as that float32: 0.79, not
// 0.7900000214576721.
func float32Decimal(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
		return f
	}
	g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	if err != nil {
		return f
	}
	return g
}
