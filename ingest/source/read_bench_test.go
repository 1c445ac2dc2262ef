package source_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"engram/ingest"
	"engram/ingest/gen"
	"engram/ingest/source"
)

// BenchmarkRead reads generated events as JSON Lines, the input of
// `engram ingest FILE`, and reports the reader's cost an event: the part of
// an ingest that runs before the pipeline's decoder.
func BenchmarkRead(b *testing.B) {
	g := gen.New(gen.Config{Seed: 1, Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	var in bytes.Buffer
	events := 0
	for events < 4096 {
		for _, ev := range g.Turn() {
			in.Write(ev)
			in.WriteByte('\n')
			events++
		}
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out := make(chan ingest.Item, 256)
		errc := make(chan error, 1)
		go func() {
			errc <- source.Read(context.Background(), bytes.NewReader(in.Bytes()), "bench.jsonl", out)
			close(out)
		}()
		n := 0
		for it := range out {
			if it.Err != nil {
				b.Fatal(it.Err)
			}
			n++
		}
		if err := <-errc; err != nil || n != events {
			b.Fatalf("read %d of %d events: %v", n, events, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
