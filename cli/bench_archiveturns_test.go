package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"engram/backend/dirarchive"
	"engram/backend/osindex"
	"engram/backend/osindex/ostest"
	"engram/model"
	"engram/query"
)

// BenchmarkArchiveTurnsPage is the inspector's first page of turns (50)
// on an index the source system wrote, from a cold cache: 900 documents of
// 300 turns in 12 sessions over three minutes, in the real cluster, the
// archive a directory. Each op is one TurnReader.Turns as the Turns view
// asks it: the page's archived events read, then one window search per
// turn (8 at a time), each object read once.
func BenchmarkArchiveTurnsPage(b *testing.B) {
	u := ostest.URL(b)
	ctx := context.Background()
	ar, err := dirarchive.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	name := ostest.Index(b, "engram-benchturns-")
	ostest.MustAdmin(b, u, "PUT", "/"+name, ostest.SourceIndexBody)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	types := []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult}
	var bulk bytes.Buffer
	for i := range 900 {
		d := &model.IndexDoc{EventID: fmt.Sprintf("bt-%04d", i), EventType: types[i%3], SessionID: fmt.Sprintf("session-%02d", i/3%12),
			Timestamp: base.Add(time.Duration(i) * 200 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z"),
			Summary:   "bench", Embedding: []float64{1, 0, 0, 0, 0, 0, 0, 0}, Structured: json.RawMessage(`{}`), Tags: []string{},
			TurnID: fmt.Sprintf("bt-turn-%03d", i/3)}
		d.ObjectStorageKey, _ = model.ArchiveKey(d.EventID, d.Timestamp)
		if _, err := ar.Put(ctx, d.ObjectStorageKey, archivedEvent(d)); err != nil {
			b.Fatal(err)
		}
		src, _ := json.Marshal(d)
		var m map[string]any
		if err := json.Unmarshal(src, &m); err != nil {
			b.Fatal(err)
		}
		for f := range osindex.ExtensionFields() {
			delete(m, f)
		}
		src, _ = json.Marshal(m)
		fmt.Fprintf(&bulk, `{"index":{"_id":%q}}`+"\n%s\n", d.EventID, src)
	}
	if out := ostest.MustAdmin(b, u, "POST", "/"+name+"/_bulk?refresh=true", bulk.String()); bytes.Contains(out, []byte(`"errors":true`)) {
		b.Fatalf("bulk: %.300s", out)
	}
	r, err := osindex.OpenReader(ctx, osindex.Config{URLs: []string{u}, Index: name, Dimension: model.StubDimension}, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for b.Loop() {
		tr := query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: ar}}
		p, err := tr.Turns(ctx, "", "", 50)
		if err != nil || len(p.Turns) != 50 || p.Turns[0].Events != 3 {
			b.Fatalf("page: %d turns, %v", len(p.Turns), err)
		}
	}
}
