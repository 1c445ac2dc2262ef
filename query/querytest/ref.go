package querytest

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// The reference semantics of the filter language and of the Reader, by
// brute force over the documents in ingestion order: what every backend
// must agree with.

// tokens is the reference analyzer: runs of letters and digits, lower-cased.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

// containsPhrase reports whether the tokens of want appear side by side in
// have; a phrase without tokens is never contained.
func containsPhrase(have, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func millis(ts string) int64 {
	t, err := model.ParseTimestamp(ts)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// Match reports whether d matches e at now.
func Match(e *expr.Expr, d *model.IndexDoc, now time.Time) bool {
	for _, t := range e.Terms {
		if termMatch(t, d, now) == t.Neg {
			return false
		}
	}
	return true
}

func termMatch(t expr.Term, d *model.IndexDoc, now time.Time) bool {
	switch t.Kind {
	case expr.KindText:
		return containsPhrase(tokens(d.Summary), tokens(t.Value))
	case expr.KindField:
		var v string
		switch t.Field {
		case expr.FieldType:
			v = d.EventType
		case expr.FieldSession:
			v = d.SessionID
		case expr.FieldTurn:
			v = d.TurnKey()
		case expr.FieldAgent:
			v = d.AgentID
		case expr.FieldTenant:
			v = d.TenantID
		case expr.FieldTrace:
			v = d.TraceID
		case expr.FieldTool:
			v = d.Tool
		case expr.FieldID:
			v = d.EventID
		case expr.FieldSource:
			v = model.SourceOf(d.Source, d.SessionID)
		case expr.FieldTag:
			return slices.Contains(d.Tags, t.Value)
		}
		return v != "" && v == t.Value
	case expr.KindSuccess:
		return d.Success != nil && *d.Success == t.Bool
	case expr.KindCompare:
		var v float64
		switch t.Field {
		case expr.FieldImportance:
			v = d.ImportanceScore
		case expr.FieldReward:
			v = d.RewardScore
		case expr.FieldConfidence:
			v = d.Confidence
		case expr.FieldLatency:
			if d.LatencyMs == nil {
				return false
			}
			v = float64(*d.LatencyMs)
		}
		return t.Op.Holds(v, t.Num)
	case expr.KindSince, expr.KindUntil:
		at := t.Time.Resolve(now)
		ts := time.UnixMilli(millis(d.Timestamp))
		if t.Kind == expr.KindSince {
			return !ts.Before(at)
		}
		return ts.Before(at)
	}
	return false
}

// visible is the documents a reader scoped to tenant sees.
func visible(docs []*model.IndexDoc, tenant string) []*model.IndexDoc {
	if tenant == "" {
		return docs
	}
	var out []*model.IndexDoc
	for _, d := range docs {
		if d.TenantID == tenant {
			out = append(out, d)
		}
	}
	return out
}

// filter is the documents matching e, in ingestion order.
func filter(docs []*model.IndexDoc, e *expr.Expr, now time.Time) []*model.IndexDoc {
	var out []*model.IndexDoc
	for _, d := range docs {
		if Match(e, d, now) {
			out = append(out, d)
		}
	}
	return out
}

func reversed(docs []*model.IndexDoc) []*model.IndexDoc {
	out := slices.Clone(docs)
	slices.Reverse(out)
	return out
}

// turnRows is the Turns listing of docs (already filtered, in ingestion
// order): one row per turn key over these documents, newest first by the
// turn's latest document.
func turnRows(docs []*model.IndexDoc) []query.TurnSummary {
	type acc struct {
		query.TurnSummary
		last int
	}
	byKey := map[string]*acc{}
	var order []*acc
	for i, d := range docs {
		ts := time.UnixMilli(millis(d.Timestamp)).UTC()
		a := byKey[d.TurnKey()]
		if a == nil {
			a = &acc{TurnSummary: query.TurnSummary{Key: d.TurnKey(), First: ts, Last: ts, MaxImportance: math.Inf(-1)}}
			byKey[d.TurnKey()] = a
			order = append(order, a)
		}
		a.last = i
		a.Events++
		if a.SessionID == "" {
			a.SessionID = d.SessionID
		}
		if a.AgentID == "" {
			a.AgentID = d.AgentID
		}
		if a.TenantID == "" {
			a.TenantID = d.TenantID
		}
		if ts.Before(a.First) {
			a.First = ts
		}
		if ts.After(a.Last) {
			a.Last = ts
		}
		if d.Success != nil && !*d.Success {
			a.AnyFailed = true
		}
		a.MaxImportance = math.Max(a.MaxImportance, d.ImportanceScore)
	}
	slices.SortFunc(order, func(a, b *acc) int { return b.last - a.last })
	out := make([]query.TurnSummary, len(order))
	for i, a := range order {
		out[i] = a.TurnSummary
	}
	return out
}

// causal is the events of one turn in causal order.
func causal(docs []*model.IndexDoc, key string) []*model.IndexDoc {
	var out []*model.IndexDoc
	for _, d := range docs {
		if d.TurnKey() == key {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b *model.IndexDoc) int {
		if a.Phase() != b.Phase() {
			return int(a.Phase()) - int(b.Phase())
		}
		if ta, tb := millis(a.Timestamp), millis(b.Timestamp); ta != tb {
			if ta < tb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.EventID, b.EventID)
	})
	return out
}

// Cosine is the cosine similarity of a and b (0 when either is zero or
// their lengths differ).
func Cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
