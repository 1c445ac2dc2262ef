package model_test

import (
	"testing"

	"engram/ingest/gen"
	"engram/model"
)

// benchEvents are generated events like the ingest benchmarks use.
func benchEvents(n int) [][]byte {
	g := gen.New(gen.Config{Seed: 7, Prefix: "bench-"})
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}

// BenchmarkDecode is the receive stage's work per event.
func BenchmarkDecode(b *testing.B) {
	events := benchEvents(1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := model.Decode(events[i%len(events)], model.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArchiveJSON is the archive stage's encoding per event.
func BenchmarkArchiveJSON(b *testing.B) {
	var evs []*model.Event
	for _, data := range benchEvents(1024) {
		e, err := model.Decode(data, model.DecodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		e.Enrich(model.StubEmbedding(e.Input.Text, 8), model.Importance(e), "events/2026/05/08/x.json")
		evs = append(evs, e)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := evs[i%len(evs)].ArchiveJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
