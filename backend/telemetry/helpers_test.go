package telemetry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"engram/backend/dirarchive"
	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/ingest/publish"
	"engram/model"
)

// event is a valid experience event; ctx is the JSON of its context
// members beyond sessionId ("" for none).
func event(id, ctx string) []byte {
	if ctx != "" {
		ctx = "," + ctx
	}
	return fmt.Appendf(nil, `{"eventId":%q,"timestamp":"2026-05-08T22:31:25.237Z","type":"user_input",`+
		`"context":{"sessionId":"sess-%s"%s},"input":{"text":"text of %s","embedding":[]},"importanceScore":0,"tags":["t"]}`,
		id, id, ctx, id)
}

// stores are the embedded stores of one test, in its temp directory.
type stores struct {
	cfg ingest.Config
}

func newStores(t testing.TB) *stores {
	dir := t.TempDir()
	a, err := dirarchive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sqliteindex.Open(filepath.Join(dir, "index.db"), sqliteindex.Options{DeferSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	topics, err := publish.OpenTopics(filepath.Join(dir, "topics"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topics.Close() })
	return &stores{cfg: ingest.Config{
		Archive: a, Index: ix, Publisher: topics, Embedder: embed.Stub{Dim: model.StubDimension},
		Decode: model.DecodeOptions{Now: time.Now, NewID: func() string { return "generated" }},
	}}
}

// run ingests items through a pipeline over s reporting to obs, and
// returns the traces by event id.
func (s *stores) run(t testing.TB, obs ingest.Observer, items ...ingest.Item) map[string]*ingest.Trace {
	cfg := s.cfg
	cfg.Observer = obs
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan ingest.Item, len(items))
	for i, it := range items {
		it.Src = ingest.Source{File: "test", Line: i + 1}
		ch <- it
	}
	close(ch)
	out := map[string]*ingest.Trace{}
	p.Run(context.Background(), ch, func(tr *ingest.Trace) { out[tr.EventID] = tr })
	return out
}

// outcomes is a comparable summary of a run: each event's outcome and key.
func outcomes(traces map[string]*ingest.Trace) []string {
	var out []string
	for id, tr := range traces {
		out = append(out, id+" "+tr.Outcome.String()+" "+tr.Key)
	}
	sort.Strings(out)
	return out
}
