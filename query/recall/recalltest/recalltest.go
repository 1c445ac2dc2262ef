package recalltest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"engram/model"
	"engram/query/recall"
)

// Now is the clock of the fixture's rankings.
var Now = time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)

// Prompt and Vector are the prompt the fixture recalls for, and its
// embedding (Dim components).
const Prompt = "alpha beta gamma"

// Dim is the fixture's embedding dimension.
const Dim = 4

// Vector is the prompt's embedding.
var Vector = []float64{1, 0, 0, 0}

// fillers is how many filler events the fixture holds.
const fillers = 20

// Docs is the fixture. By factor alone the four events order
//
//	text        A B C D  (A holds the three words, B two, C one, D none)
//	similarity  B C D A
//	importance  C D A B
//	recency     D A B C
func Docs() []*model.IndexDoc {
	mk := func(id, summary string, emb []float64, imp float64, age time.Duration, tag string) *model.IndexDoc {
		return &model.IndexDoc{
			EventID: id, Timestamp: Now.Add(-age).Format(time.RFC3339Nano), EventType: "observation",
			SessionID: "recall-s", AgentID: "recall-agent", Summary: summary, Embedding: emb,
			Structured: json.RawMessage(`{}`), ImportanceScore: imp, RewardScore: 0.5, Confidence: 0.5,
			DecayFactor: 1, ObjectStorageKey: "events/" + id + ".json", Tags: []string{tag},
		}
	}
	docs := []*model.IndexDoc{
		mk("recall-a", "alpha beta gamma one two", []float64{0, 0, 1, 0}, 0.5, 2*time.Hour, "fixture"),
		mk("recall-b", "alpha beta three four five", []float64{1, 0.1, 0, 0}, 0.3, 3*time.Hour, "fixture"),
		mk("recall-c", "alpha six seven eight nine", []float64{1, 1, 0, 0}, 0.9, 4*time.Hour, "fixture"),
		mk("recall-d", "ten eleven twelve thirteen fourteen", []float64{0.2, 1, 0, 0}, 0.7, time.Hour, "fixture"),
	}
	for i := range fillers {
		docs = append(docs, mk(fmt.Sprintf("recall-filler-%02d", i), fmt.Sprintf("filler words only number %d", i),
			[]float64{0, 0, 0, 1}, 0.1, 48*time.Hour, "filler"))
	}
	return docs
}

// Case is one known answer: the fixture's four events in the order the
// settings rank them.
type Case struct {
	Name     string
	Settings recall.Settings
	Want     []string
}

func only(f recall.Factor) recall.Settings {
	s := recall.DefaultSettings()
	s.Weights = recall.Weights{}
	s.Weights[f] = 1
	return s
}

// Cases returns each factor alone, and the salience formula (half-life 1h:
// D .7·.5, A .5·.25, C .9·.0625, B .3·.125).
func Cases() []Case {
	sal := recall.Settings{Formula: recall.Salience, HalfLife: time.Hour}
	return []Case{
		{"text only", only(recall.Text), []string{"recall-a", "recall-b", "recall-c", "recall-d"}},
		{"similarity only", only(recall.Similarity), []string{"recall-b", "recall-c", "recall-d", "recall-a"}},
		{"importance only", only(recall.Importance), []string{"recall-c", "recall-d", "recall-a", "recall-b"}},
		{"recency only", only(recall.Recency), []string{"recall-d", "recall-a", "recall-b", "recall-c"}},
		{"salience", sal, []string{"recall-d", "recall-a", "recall-c", "recall-b"}},
	}
}

// Run checks s, holding Docs, against every case, filtered to the
// fixture's four events and unfiltered, and checks Explain.
func Run(t *testing.T, s recall.Searcher) {
	e := &recall.Engine{Searcher: s, Embedder: fixed{}, Now: func() time.Time { return Now }}
	ctx := context.Background()
	for _, c := range Cases() {
		for _, expr := range []string{"tag:fixture", ""} {
			t.Run(c.Name+" "+expr, func(t *testing.T) {
				_, res, _, err := e.Run(ctx, Prompt, expr, nil, c.Settings)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range res {
					if slices.Contains(r.Doc.Tags, "fixture") {
						got = append(got, r.Doc.EventID)
					} else if expr != "" {
						t.Errorf("%s passed the filter %s", r.Doc.EventID, expr)
					}
				}
				if !slices.Equal(got, c.Want) {
					t.Errorf("order %v, want %v", got, c.Want)
				}
			})
		}
	}
	t.Run("explain", func(t *testing.T) {
		for _, c := range []struct {
			weights, id string
			want        recall.Factor
		}{
			{"text=1,recency=0.1", "recall-d", recall.Text},
			{"recency=1,importance=0.1", "recall-c", recall.Recency},
			{"importance=1,similarity=0.2", "recall-b", recall.Importance},
			{"similarity=1,importance=0.2", "recall-a", recall.Similarity},
		} {
			st := recall.DefaultSettings()
			w, err := recall.ParseWeights(c.weights)
			if err != nil {
				t.Fatal(err)
			}
			st.Weights = w
			_, res, _, err := e.Run(ctx, Prompt, "tag:fixture", []string{c.id}, st)
			if err != nil {
				t.Fatal(err)
			}
			x := recall.Explain(res, 1, c.id, st)
			if x.Missing || x.In || x.Decisive != c.want {
				t.Errorf("%s, %s: %+v: %s; want %s decisive", c.weights, c.id, x, x.Why(), c.want)
			}
		}
	})
}

// fixed embeds every prompt as Vector.
type fixed struct{}

func (fixed) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i := range out {
		out[i] = Vector
	}
	return out, nil
}
