package osindex

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCreateLikeAndSwap upgrades the source system's own index: the new
// index has engram's mapping with the deployment's embedding definition
// and k-NN settings, and the alias moves in one request, the old index
// kept.
func TestCreateLikeAndSwap(t *testing.T) {
	u := osURL(t)
	old, into := testIndex(t), testIndex(t)
	alias := "alias-" + into
	ctx := context.Background()
	mustAdmin(t, u, "PUT", "/"+old, sourceIndexBody)
	bulkSource(t, u, old, sourceDocs(time.Now().Add(-time.Hour), 5))
	src := openIndex(t, old, nil)

	if _, err := src.CreateLike(ctx, old); err == nil {
		t.Error("CreateLike into the index itself: no error")
	}
	created, err := src.CreateLike(ctx, into)
	if err != nil || !created {
		t.Fatalf("CreateLike = %v, %v", created, err)
	}
	m := mapping(t, into)
	for _, f := range []string{"turn_id", "trace_id", "tool", "success", "latency_ms", "tenant_id", "ingested_at", "embedding_meta"} {
		if m[f] == nil {
			t.Errorf("new index lacks %s: %v", f, m)
		}
	}
	emb, _ := json.Marshal(m["embedding"])
	for _, want := range []string{`"dimension":8`, `"engine":"lucene"`, `"space_type":"l2"`, `"ef_construction":128`} {
		if !strings.Contains(string(emb), want) {
			t.Errorf("embedding %s lacks %s", emb, want)
		}
	}
	set := settings(t, into)
	sj, _ := json.Marshal(set)
	for _, want := range []string{`"index.knn":"true"`, `"index.number_of_shards":"1"`, `"index.knn.algo_param.ef_search":"100"`} {
		if !strings.Contains(string(sj), want) {
			t.Errorf("settings %s lack %s", sj, want)
		}
	}
	if again, err := src.CreateLike(ctx, into); err != nil || again {
		t.Errorf("CreateLike again (resume) = %v, %v; want kept", again, err)
	}
	other := testIndex(t)
	mustAdmin(t, u, "PUT", "/"+other, `{}`)
	if _, err := src.CreateLike(ctx, other); err == nil || !strings.Contains(err.Error(), "without engram's mapping") {
		t.Errorf("CreateLike into a foreign index: %v", err)
	}

	// The alias does not exist: added. Then it names old: moved.
	if prev, err := src.SwapAlias(ctx, alias, old); err != nil || len(prev) != 0 {
		t.Fatalf("SwapAlias new alias = %v, %v", prev, err)
	}
	prev, err := src.SwapAlias(ctx, alias, into)
	if err != nil || len(prev) != 1 || prev[0] != old {
		t.Fatalf("SwapAlias = %v, %v; want [%s]", prev, err, old)
	}
	data := mustAdmin(t, u, "GET", "/_alias/"+alias, "")
	if !strings.Contains(string(data), into) || strings.Contains(string(data), old) {
		t.Errorf("alias after the swap: %s", data)
	}
	if code, _ := admin(t, u, "HEAD", "/"+old, ""); code != 200 {
		t.Errorf("old index after the swap: HEAD %d, want kept", code)
	}
	if _, err := src.SwapAlias(ctx, old, into); err == nil || !strings.Contains(err.Error(), "is an index, not an alias") {
		t.Errorf("SwapAlias onto an index's name: %v", err)
	}
}
