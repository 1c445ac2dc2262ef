package osindex

import (
	"context"
	"testing"

	"engram/model"
	"engram/query"
)

// openIndex opens (creating) the index through osindex.
func openIndex(t testing.TB, name string, mod func(*Config)) *Index {
	t.Helper()
	cfg := Config{URLs: []string{osURL(t)}, Index: name, Dimension: 8, Logf: t.Logf}
	if mod != nil {
		mod(&cfg)
	}
	ix, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func writeDocs(t testing.TB, ix *Index, docs []*model.IndexDoc) {
	t.Helper()
	for i, res := range ix.Write(context.Background(), docs) {
		if res.Err != nil || !res.Created {
			t.Fatalf("write %s: created=%v err=%v", docs[i].EventID, res.Created, res.Err)
		}
	}
}

func newReader(t testing.TB, ix *Index, opts query.Options) *Reader {
	t.Helper()
	r, err := readerOn(context.Background(), ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Shared with the writer's tests: see ostest.
