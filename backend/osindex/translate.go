package osindex

import (
	"math"
	"time"

	"engram/model"
	"engram/query/expr"
)

// Field names of the index (docs/data-contract.md, The index document).
const (
	fEventID    = "event_id"
	fTimestamp  = "timestamp"
	fEventType  = "event_type"
	fSession    = "session_id"
	fAgent      = "agent_id"
	fSummary    = "summary"
	fEmbedding  = "embedding"
	fImportance = "importance_score"
	fTags       = "tags"
	fTurnID     = "turn_id"
	fTenant     = "tenant_id"
	fTraceID    = "trace_id"
	fSuccess    = "success"
	fLatency    = "latency_ms"
	fIngestedAt = "ingested_at"
	fSource     = "source"
)

var keywordField = map[string]string{
	expr.FieldType:    fEventType,
	expr.FieldSession: fSession,
	expr.FieldAgent:   fAgent,
	expr.FieldTenant:  fTenant,
	expr.FieldTrace:   fTraceID,
	expr.FieldTool:    "tool",
	expr.FieldTag:     fTags,
	expr.FieldID:      fEventID,
}

var numericField = map[string]string{
	expr.FieldImportance: fImportance,
	expr.FieldReward:     "reward_score",
	expr.FieldConfidence: "confidence",
	expr.FieldLatency:    fLatency,
}

// integerFields are the numeric fields of an integer type (a comparison
// with a fraction is turned into whole bounds here, not by the server).
var integerFields = map[string]bool{fLatency: true}

type obj = map[string]any

// boolQuery collects the clauses of a bool query.
type boolQuery struct {
	must, filter, mustNot []any
}

func (b *boolQuery) query() obj {
	if len(b.must)+len(b.filter)+len(b.mustNot) == 0 {
		return obj{"match_all": obj{}}
	}
	q := obj{}
	if len(b.must) > 0 {
		q["must"] = b.must
	}
	if len(b.filter) > 0 {
		q["filter"] = b.filter
	}
	if len(b.mustNot) > 0 {
		q["must_not"] = b.mustNot
	}
	return obj{"bool": q}
}

func term(field string, v any) obj   { return obj{"term": obj{field: v}} }
func exists(field string) obj        { return obj{"exists": obj{"field": field}} }
func matchNone() obj                 { return obj{"match_none": obj{}} }
func ids(values []string) obj        { return obj{"ids": obj{"values": values}} }
func rangeQ(field string, r obj) obj { return obj{"range": obj{field: r}} }

func termOrTerms(field string, values []string) obj {
	if len(values) == 1 {
		return term(field, values[0])
	}
	return obj{"terms": obj{field: values}}
}

// turnQuery matches the documents whose turn key (docs/data-contract.md,
// Turns and causal order:
// turn_id, else trace_id, else event_id) is one of keys.
func turnQuery(keys ...string) obj {
	return obj{"bool": obj{
		"should": []any{
			termOrTerms(fTurnID, keys),
			obj{"bool": obj{"filter": []any{termOrTerms(fTraceID, keys)}, "must_not": []any{exists(fTurnID)}}},
			obj{"bool": obj{"filter": []any{termOrTerms(fEventID, keys)}, "must_not": []any{exists(fTurnID), exists(fTraceID)}}},
		},
		"minimum_should_match": 1,
	}}
}

// sourceQuery matches the documents whose source (model.SourceOf) is v:
// the source field, else system for a system: session (a document the
// source system wrote, without engram's extensions).
func sourceQuery(v string) obj {
	if v != model.SourceSystem {
		return term(fSource, v)
	}
	return obj{"bool": obj{
		"should": []any{
			term(fSource, v),
			obj{"bool": obj{"filter": []any{obj{"prefix": obj{fSession: model.SystemSessionPrefix}}}, "must_not": []any{exists(fSource)}}},
		},
		"minimum_should_match": 1,
	}}
}

// turnKeyScript computes the turn key in painless, with the same
// fallbacks (and without failing on an index that lacks the extension
// fields' mapping).
const turnKeyScript = `if (doc.containsKey('turn_id') && doc['turn_id'].size() > 0) { return doc['turn_id'].value; }
if (doc.containsKey('trace_id') && doc['trace_id'].size() > 0) { return doc['trace_id'].value; }
return doc['event_id'].value;`

// tenantQuery is the tenant scope (nil without one).
func tenantQuery(tenant string) []any {
	if tenant == "" {
		return nil
	}
	return []any{term(fTenant, tenant)}
}

// translate turns e into a bool query run at now, scoped to tenant. With
// scored, the positive free words and phrases go into must (they rank the
// hits); otherwise every clause is a filter.
func translate(e *expr.Expr, now time.Time, tenant string, scored bool) obj {
	b := &boolQuery{filter: tenantQuery(tenant)}
	if e == nil {
		return b.query()
	}
	add := func(neg bool, q obj) {
		if neg {
			b.mustNot = append(b.mustNot, q)
		} else {
			b.filter = append(b.filter, q)
		}
	}
	for _, t := range e.Terms {
		switch t.Kind {
		case expr.KindText:
			// A phrase of the value's tokens: a single word is a phrase of
			// one token, a word like "a.b" of two, side by side as the
			// reference tokenizer sees them. No tokens match nothing
			// (zero_terms_query none), so negated they exclude nothing.
			q := obj{"match_phrase": obj{fSummary: obj{"query": t.Value}}}
			if scored && !t.Neg {
				b.must = append(b.must, q)
			} else {
				add(t.Neg, q)
			}
		case expr.KindField:
			if t.Field == expr.FieldTurn {
				add(t.Neg, turnQuery(t.Value))
				continue
			}
			if t.Field == expr.FieldSource {
				add(t.Neg, sourceQuery(t.Value))
				continue
			}
			f := keywordField[t.Field]
			if f == "" {
				add(t.Neg, matchNone()) // not from Parse
				continue
			}
			add(t.Neg, term(f, t.Value))
		case expr.KindSuccess:
			add(t.Neg, term(fSuccess, t.Bool))
		case expr.KindCompare:
			f := numericField[t.Field]
			if f == "" {
				add(t.Neg, matchNone())
				continue
			}
			add(t.Neg, compare(f, t.Op, t.Num))
		case expr.KindSince, expr.KindUntil:
			op := "gte"
			if t.Kind == expr.KindUntil {
				op = "lt"
			}
			add(t.Neg, rangeQ(fTimestamp, obj{op: ceilMillis(t.Time.Resolve(now)), "format": "epoch_millis"}))
		default:
			add(t.Neg, matchNone())
		}
	}
	return b.query()
}

// compare is field op x. Float fields hold 32-bit floats: the server
// rounds x the same way, so equal decimals compare equal. Bounds outside
// the field's range are decided here (the server rejects them).
func compare(field string, op expr.Op, x float64) obj {
	if integerFields[field] {
		return compareInt(field, op, x)
	}
	const big = math.MaxFloat32
	switch {
	case x > big || x < -big:
		above := x > 0
		switch op {
		case expr.OpGT, expr.OpGE:
			if above {
				return matchNone()
			}
			return exists(field)
		case expr.OpLT, expr.OpLE:
			if above {
				return exists(field)
			}
			return matchNone()
		}
		return matchNone()
	}
	switch op {
	case expr.OpEQ:
		return term(field, x)
	case expr.OpLT:
		return rangeQ(field, obj{"lt": x})
	case expr.OpLE:
		return rangeQ(field, obj{"lte": x})
	case expr.OpGT:
		return rangeQ(field, obj{"gt": x})
	case expr.OpGE:
		return rangeQ(field, obj{"gte": x})
	}
	return matchNone()
}

// compareInt is field op x on a long field, as whole bounds.
func compareInt(field string, op expr.Op, x float64) obj {
	lo, hi := math.Inf(-1), math.Inf(1) // inclusive bounds
	switch op {
	case expr.OpEQ:
		if x != math.Trunc(x) {
			return matchNone()
		}
		lo, hi = x, x
	case expr.OpGT:
		lo = math.Floor(x) + 1
	case expr.OpGE:
		lo = math.Ceil(x)
	case expr.OpLT:
		hi = math.Ceil(x) - 1
	case expr.OpLE:
		hi = math.Floor(x)
	}
	// float64(MaxInt64) is 2^63, one past the largest long.
	const top, bottom = float64(math.MaxInt64), float64(math.MinInt64)
	if lo >= top || hi < bottom || lo > hi {
		return matchNone()
	}
	r := obj{}
	if lo > bottom {
		r["gte"] = int64(lo)
	}
	if hi < top {
		r["lte"] = int64(hi)
	}
	if len(r) == 0 {
		return exists(field)
	}
	return rangeQ(field, r)
}

// ceilMillis is the first whole millisecond at or after t: timestamps are
// indexed to the millisecond.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}
