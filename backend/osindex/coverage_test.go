package osindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/query"
)

// TestCoverage counts, on the source system's own index, what its
// documents lack, then again once engram has written documents of its own
// (after coverageTTL: the answer is cached until then).
func TestCoverage(t *testing.T) {
	u := osURL(t)
	name := testIndex(t)
	ctx := context.Background()
	mustAdmin(t, u, "PUT", "/"+name, sourceIndexBody)
	docs := sourceDocs(time.Now().Add(-time.Hour).Truncate(time.Millisecond), 30)
	bulkSource(t, u, name, docs)

	ix := openIndex(t, name, nil)
	r := newReader(t, ix, query.Options{})
	clock := time.Now()
	r.now = func() time.Time { return clock }
	c, err := r.Coverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 30 || c.Plain != 30 || !c.Partial() {
		t.Fatalf("coverage of 30 source documents: %+v", c)
	}
	for _, f := range []string{"tool", "success", "latency_ms", "turn_id", "trace_id", "tenant_id"} {
		if c.Lacking[f] != 30 {
			t.Errorf("Lacking[%s] = %d, want 30", f, c.Lacking[f])
		}
	}
	ws, err := query.CoverageWarnings(ctx, r, "tool:kubectl success:false")
	want := "tool: 30 of 30 documents have no tool field — written without engram's extensions; see engram reindex --into"
	if err != nil || len(ws) != 2 || ws[0] != want {
		t.Fatalf("warnings %q, %v; want first %q", ws, err, want)
	}

	for i := range 10 {
		d := testDoc(fmt.Sprintf("eng-%02d", i))
		d.TraceID = "" // an engram document may lack an extension field: not a gap
		mustWrite(t, ix, d)
	}
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if c2, _ := r.Coverage(ctx); c2.Total != 30 {
		t.Errorf("within CoverageTTL the cached answer is kept: %+v", c2)
	}
	clock = clock.Add(coverageTTL)
	c, err = r.Coverage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 40 || c.Plain != 30 || c.Lacking["trace_id"] != 30 {
		t.Errorf("after engram wrote 10: %+v", c)
	}
	if m := c.Mark(); m != "30 of 40 documents without engram's extensions" {
		t.Errorf("Mark = %q", m)
	}
	// A tenant sees only engram's documents (the source system's have no
	// tenant): nothing lacks anything there.
	rt := newReader(t, ix, query.Options{Tenant: "t1"})
	if ct, err := rt.Coverage(ctx); err != nil || ct.Total != 10 || ct.Partial() {
		t.Errorf("tenant coverage %+v, %v", ct, err)
	}
}
