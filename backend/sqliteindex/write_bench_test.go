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
func BenchmarkWrite(b *testing.B) {
	for _, dim := range []int{8, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
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
		})
	}
}
