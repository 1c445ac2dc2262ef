package osindex

import (
	"context"
	"math"
	"testing"

	"engram/query"
	"engram/query/recall"
	"engram/query/recall/recalltest"
)

// TestRecall runs the known answers of recall on the test cluster: one
// hybrid request (match + knn), factors recomputed from the hits.
func TestRecall(t *testing.T) {
	if !knnCluster(t) {
		t.Skip("the cluster has no k-NN plugin")
	}
	ix := openIndex(t, testIndex(t), func(c *Config) { c.Dimension = recalltest.Dim })
	writeDocs(t, ix, recalltest.Docs())
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	recalltest.Run(t, newReader(t, ix, query.Options{}))
}

// TestRecallNamedScores: each hit's BM25 is its match's own score (the
// server returns named queries' scores), not the hybrid score.
func TestRecallNamedScores(t *testing.T) {
	if !knnCluster(t) {
		t.Skip("the cluster has no k-NN plugin")
	}
	ix := openIndex(t, testIndex(t), func(c *Config) { c.Dimension = recalltest.Dim })
	writeDocs(t, ix, recalltest.Docs())
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	text, err := r.Recall(context.Background(), recall.Request{Text: recalltest.Prompt, Expr: "tag:fixture"})
	if err != nil {
		t.Fatal(err)
	}
	both, err := r.Recall(context.Background(), recall.Request{Text: recalltest.Prompt, Expr: "tag:fixture", Vector: recalltest.Vector})
	if err != nil {
		t.Fatal(err)
	}
	bm := map[string]float64{}
	for _, c := range text.Candidates {
		bm[c.Doc.EventID] = c.BM25
	}
	if len(both.Candidates) != 4 || len(text.Candidates) != 3 {
		t.Fatalf("%d candidates with the vector, %d without; want 4 and 3", len(both.Candidates), len(text.Candidates))
	}
	for _, c := range both.Candidates {
		if math.Abs(c.BM25-bm[c.Doc.EventID]) > 1e-6 {
			t.Errorf("%s: bm25 %v in the hybrid request, %v by the match alone", c.Doc.EventID, c.BM25, bm[c.Doc.EventID])
		}
	}
}
