package recall_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/query/recall"
	"engram/query/recall/recalltest"
)

// candidates are the fixture's documents scored as a backend would:
// BM25 by how many prompt words each holds, the exact cosine.
func candidates() []recall.Candidate {
	var out []recall.Candidate
	for _, d := range recalltest.Docs() {
		c := recall.Candidate{Doc: d}
		for _, w := range strings.Fields(recalltest.Prompt) {
			if strings.Contains(d.Summary, w) {
				c.BM25++
			}
		}
		c.Cosine, c.HasCosine = recall.Cosine(recalltest.Vector, d.Embedding)
		out = append(out, c)
	}
	return out
}

// TestRankEachFactorAlone: the pure ranking gives the fixture's known
// orders.
func TestRankEachFactorAlone(t *testing.T) {
	for _, c := range recalltest.Cases() {
		res := recall.Rank(candidates(), c.Settings, recalltest.Now)
		var got []string
		for _, r := range res {
			if slices.Contains(r.Doc.Tags, "fixture") {
				got = append(got, r.Doc.EventID)
			}
		}
		if !slices.Equal(got, c.Want) {
			t.Errorf("%s: %v, want %v", c.Name, got, c.Want)
		}
	}
}

func TestRankArithmetic(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	doc := func(id string, age time.Duration, imp float64) *model.IndexDoc {
		return &model.IndexDoc{EventID: id, Timestamp: now.Add(-age).Format(time.RFC3339), ImportanceScore: imp, RewardScore: 0.5, DecayFactor: 1}
	}
	cands := []recall.Candidate{
		{Doc: doc("a", 24*time.Hour, 0.8), BM25: 4, Cosine: 0.5, HasCosine: true},
		{Doc: doc("b", 0, 0.2), BM25: 2, Cosine: -0.3, HasCosine: true},
	}
	res := recall.Rank(cands, recall.DefaultSettings(), now)
	byID := map[string]recall.Result{}
	for _, r := range res {
		byID[r.Doc.EventID] = r
	}
	a, b := byID["a"], byID["b"]
	want := [recall.NumFactors]float64{1, 0.5, 0.8, 0.5, 0.5, 1}
	for f, v := range want {
		if math.Abs(a.Values[f]-v) > 1e-9 {
			t.Errorf("a %s = %v, want %v", recall.Factor(f), a.Values[f], v)
		}
	}
	if b.Values[recall.Text] != 0.5 || b.Values[recall.Similarity] != 0 || b.Values[recall.Recency] != 1 {
		t.Errorf("b values %v", b.Values)
	}
	var sum float64
	for _, p := range a.Parts {
		sum += p
	}
	if math.Abs(sum-a.Score) > 1e-12 || math.Abs(a.Score-(0.3+0.15+0.12+0.075+0.025+0.05)) > 1e-9 {
		t.Errorf("a score %v, parts sum %v", a.Score, sum)
	}
	sal := recall.Rank(cands, recall.Settings{Formula: recall.Salience, HalfLife: 24 * time.Hour}, now)
	if sal[0].Doc.EventID != "a" || math.Abs(sal[0].Score-0.4) > 1e-9 || math.Abs(sal[1].Score-0.2) > 1e-9 {
		t.Errorf("salience %v %v", sal[0].Score, sal[1].Score)
	}
}

func TestParseWeights(t *testing.T) {
	w, err := recall.ParseWeights("text=1, recency=0.5")
	if err != nil || w[recall.Text] != 1 || w[recall.Recency] != 0.5 || w[recall.Similarity] != 0 {
		t.Fatalf("%v %v", w, err)
	}
	back, err := recall.ParseWeights(recall.DefaultWeights().String())
	if err != nil || back != recall.DefaultWeights() {
		t.Fatalf("round trip %v %v", back, err)
	}
	for _, bad := range []string{"", "text", "speed=1", "text=-1", "text=0", "text=x"} {
		if _, err := recall.ParseWeights(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestExplainInAndMissing(t *testing.T) {
	res := recall.Rank(candidates(), recall.DefaultSettings(), recalltest.Now)
	if x := recall.Explain(res, 3, res[1].Doc.EventID, recall.DefaultSettings()); !x.In || x.Rank != 2 {
		t.Errorf("in: %+v", x)
	}
	if x := recall.Explain(res, 3, "nope", recall.DefaultSettings()); !x.Missing || !strings.Contains(x.Why(), "not among the candidates") {
		t.Errorf("missing: %+v", x)
	}
}

func TestBar(t *testing.T) {
	for v, want := range map[float64]string{0: "    ", 1: "████", 0.5: "██  ", 0.53125: "██▏ "} {
		if got := recall.Bar(v, 4); got != want {
			t.Errorf("Bar(%v) = %q, want %q", v, got, want)
		}
	}
}
