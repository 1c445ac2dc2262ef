package osindex

import (
	"context"
	"testing"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// TestContract runs the shared contract suite against the test cluster,
// written through osindex (refresh false; Settle refreshes).
func TestContract(t *testing.T) {
	ix := openIndex(t, testIndex(t), nil)
	if !ix.KNN() {
		t.Log("the cluster has no k-NN plugin: the suite's Similar checks will fail")
	}
	querytest.Run(t, querytest.Harness{
		Write: func(t testing.TB, docs []*model.IndexDoc) { writeDocs(t, ix, docs) },
		Settle: func(t testing.TB) {
			if err := ix.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
		Open: func(t testing.TB, opts query.Options) query.Reader { return newReader(t, ix, opts) },
	})
}
