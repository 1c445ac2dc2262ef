package opensearch

import (
	"context"
	"engram/ingest/osindex/ostest"
	"testing"

	"engram/ingest/osindex"
	"engram/model"
	"engram/query"
)

// openIndex opens (creating) the index through osindex.
func openIndex(t testing.TB, name string, mod func(*osindex.Config)) *osindex.Index {
	t.Helper()
	cfg := osindex.Config{URLs: []string{osURL(t)}, Index: name, Dimension: 8, Logf: t.Logf}
	if mod != nil {
		mod(&cfg)
	}
	ix, err := osindex.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func writeDocs(t testing.TB, ix *osindex.Index, docs []*model.IndexDoc) {
	t.Helper()
	for i, res := range ix.Write(context.Background(), docs) {
		if res.Err != nil || !res.Created {
			t.Fatalf("write %s: created=%v err=%v", docs[i].EventID, res.Created, res.Err)
		}
	}
}

func newReader(t testing.TB, ix *osindex.Index, opts query.Options) *Reader {
	t.Helper()
	r, err := New(context.Background(), ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Shared with the writer's tests: see ostest.
func osURL(t testing.TB) string     { return ostest.URL(t) }
func testIndex(t testing.TB) string { return ostest.Index(t, "engram-test-q-") }
func admin(t testing.TB, base, method, path, body string) (int, []byte) {
	return ostest.Admin(t, base, method, path, body)
}
func mustAdmin(t testing.TB, base, method, path, body string) []byte {
	return ostest.MustAdmin(t, base, method, path, body)
}
