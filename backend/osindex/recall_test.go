package osindex

import (
	"context"
	"testing"

	"engram/query"
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
