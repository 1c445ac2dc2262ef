package querytest

import (
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/query"
)

// wholeTurns is rows (the turns of the matching documents, in their
// order) with each row's totals taken over visible, the reader's
// documents: a filtered listing lists the turns with a match, each with
// the whole turn's totals (query.TurnSummary).
func wholeTurns(rows []query.TurnSummary, visible []*model.IndexDoc) []query.TurnSummary {
	all := map[string]query.TurnSummary{}
	for _, r := range turnRows(visible) {
		all[r.Key] = r
	}
	details := turnDetails(visible)
	out := make([]query.TurnSummary, len(rows))
	for i, r := range rows {
		w := all[r.Key]
		if d := details[r.Key]; d != nil {
			w.Failures, w.Successes, w.LatencyMs, w.Summary = d.Failures, d.Successes, d.LatencyMs, d.Summary
		}
		out[i] = w
	}
	return out
}

// turnDetails is, per turn key of docs, its results, its total latency and
// the summary of its first document in causal order.
func turnDetails(docs []*model.IndexDoc) map[string]*query.TurnSummary {
	out := map[string]*query.TurnSummary{}
	head := map[string]*model.IndexDoc{}
	for _, d := range docs {
		k := d.TurnKey()
		t := out[k]
		if t == nil {
			t = &query.TurnSummary{Key: k}
			out[k] = t
		}
		if d.Success != nil {
			if *d.Success {
				t.Successes++
			} else {
				t.Failures++
			}
		}
		if d.LatencyMs != nil {
			t.LatencyMs += *d.LatencyMs
		}
		if h := head[k]; h == nil || causalLess(d, h) {
			head[k] = d
			t.Summary = d.Summary
		}
	}
	return out
}

// causalLess orders documents of one turn causally: phase, timestamp (to
// the millisecond), event id.
func causalLess(a, b *model.IndexDoc) bool {
	if pa, pb := a.Phase(), b.Phase(); pa != pb {
		return pa < pb
	}
	if ta, tb := millis(a.Timestamp), millis(b.Timestamp); ta != tb {
		return ta < tb
	}
	return strings.Compare(a.EventID, b.EventID) < 0
}

// checkWholeTurns: the filtered listings of the contract compare whole
// turns, and the data set makes that matter — some turn with a match has
// more events than its matches, and the whole turn's results, latency and
// summary differ from its matches' alone.
func (s *suite) checkWholeTurns(t *testing.T) {
	var partial, summary bool
	for _, src := range []string{"success:false", "type:" + model.TypeToolResult} {
		matching := filter(s.docs, mustParse(t, src), time.Now())
		part := turnRows(matching)
		whole := wholeTurns(part, s.docs)
		for i := range part {
			partial = partial || whole[i].Events > part[i].Events
			if d := turnDetails(matching)[part[i].Key]; d != nil {
				summary = summary || d.Summary != whole[i].Summary
			}
		}
	}
	if !partial || !summary {
		t.Errorf("the data set has no turn whose matches are fewer than its events (%v) or start elsewhere (%v)", partial, summary)
	}
	var latency, ok, failed bool
	for _, r := range wholeTurns(turnRows(s.docs), s.docs) {
		latency = latency || r.LatencyMs > 0
		ok = ok || r.Outcome() == "ok"
		failed = failed || r.Outcome() == "failed"
	}
	if !latency || !ok || !failed {
		t.Errorf("the data set lacks turns with latency (%v), turns that succeeded (%v) or failed (%v)", latency, ok, failed)
	}
}
