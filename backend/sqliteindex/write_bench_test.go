package sqliteindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/internal/fsfloor"
	"engram/model"
)

// BenchmarkWrite writes batches of 256 new documents, one batch per
// iteration, durably (WAL, synchronous=FULL), and reports docs/s and the
// CPU per document (of the whole process: the writer is all it runs).
// Every document has the same timestamp and trace; BenchmarkWriteSpread
// writes documents as the pipeline sees them.
func BenchmarkWrite(b *testing.B) {
	for _, dim := range []int{8, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) { benchWrite(b, dim, false) })
	}
}

// BenchmarkWriteSpread is BenchmarkWrite (dimension 8) of documents as
// `engram ingest` of the binary benchmark's input gives them: each batch
// over 28 days (so every index keyed by time or archive key takes its keys
// at 28 places), a random trace id per turn: the indexes on those take
// their keys in many places, and cost more per document (BENCHMARKS.md).
func BenchmarkWriteSpread(b *testing.B) { benchWrite(b, 8, true) }

func benchWrite(b *testing.B, dim int, spread bool) {
	const batch = 256
	db, _ := openTest(b)
	emb := make([]float64, dim)
	for i := range emb {
		emb[i] = float64(i%97)/97 - 0.0123456789
	}
	mk := func(it int) []*model.IndexDoc {
		docs := make([]*model.IndexDoc, batch)
		for i := range docs {
			d := testDoc(fmt.Sprintf("bench-%06d-%03d", it, i))
			d.TurnID = fmt.Sprintf("turn-%06d-%02d", it, i/4) // 4 events per turn
			d.Embedding = emb
			d.Summary = fmt.Sprintf("Event %d of batch %d: the agent called a tool to search the experience index and found %d results", i, it, i*7)
			if spread {
				day := 1 + i%28
				d.Timestamp = fmt.Sprintf("2026-03-%02dT10:%02d:%02d.%03dZ", day, it/3600%60, it/60%60, it%1000)
				d.ObjectStorageKey = fmt.Sprintf("events/2026/03/%02d/%s.json", day, d.EventID)
				d.TraceID = fmt.Sprintf("%016x%016x", uint64(it*batch+i/4)*0x9E3779B97F4A7C15, uint64(it)*0xBF58476D1CE4E5B9)
			}
			docs[i] = d
		}
		return docs
	}
	ctx := context.Background()
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for it := range b.N {
		b.StopTimer()
		docs := mk(it)
		b.StartTimer()
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		for _, r := range db.Write(ctx, docs) {
			if r.Err != nil || !r.Created {
				b.Fatal(r)
			}
		}
		elapsed, cpu = elapsed+time.Since(start), cpu+fsfloor.CPUTime()-cpu0
	}
	b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "docs/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*batch), "cpu-µs/doc")
}

// BenchmarkWriteExisting writes batches of 256 documents most of which the
// index holds already (a rebuild over an index that lost some), durably:
// new=0 none is new, new=1/16 one in sixteen. A duplicate makes the
// multi-row insert of its rows fail and them be inserted one by one, so
// this is where that costs most. cpu-µs/doc is per document written.
func BenchmarkWriteExisting(b *testing.B) {
	for _, every := range []int{0, 16} {
		b.Run(fmt.Sprintf("new=1/%d", every), func(b *testing.B) {
			const batch = 256
			db, _ := openTest(b)
			ctx := context.Background()
			mk := func(it int, stored bool) []*model.IndexDoc {
				docs := make([]*model.IndexDoc, batch)
				for i := range docs {
					id := fmt.Sprintf("bench-%06d-%03d", it, i)
					if !stored && every > 0 && i%every == every-1 {
						id += "-new"
					}
					d := testDoc(id)
					d.TurnID = fmt.Sprintf("turn-%06d-%02d", it, i/4)
					docs[i] = d
				}
				return docs
			}
			for it := range b.N {
				db.Write(ctx, mk(it, true))
			}
			var elapsed, cpu time.Duration
			b.ResetTimer()
			for it := range b.N {
				b.StopTimer()
				docs := mk(it, false)
				b.StartTimer()
				start, cpu0 := time.Now(), fsfloor.CPUTime()
				for _, r := range db.Write(ctx, docs) {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
				elapsed, cpu = elapsed+time.Since(start), cpu+fsfloor.CPUTime()-cpu0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*batch), "cpu-µs/doc")
		})
	}
}
