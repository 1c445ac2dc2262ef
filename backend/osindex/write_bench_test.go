package osindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/model"
)

// BenchmarkBulk writes batches of 500 new documents, one Write per
// iteration (one _bulk request, refresh=false), and reports docs/s.
func BenchmarkBulk(b *testing.B) {
	for _, dim := range []int{8, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			const batch = 500
			cfg := testConfig(b, testIndex(b))
			cfg.Dimension = dim
			cfg.Logf = nil
			cfg.Timeout = 5 * time.Minute // a shared test node can be slow
			ix := openTest(b, cfg)
			emb := make([]float64, dim)
			for i := range emb {
				emb[i] = float64(i%97)/97 - 0.0123456789
			}
			mk := func(it int) []*model.IndexDoc {
				docs := make([]*model.IndexDoc, batch)
				for i := range docs {
					d := testDoc(fmt.Sprintf("bench-%06d-%03d", it, i))
					d.TurnID = fmt.Sprintf("turn-%06d-%02d", it, i/4)
					d.Embedding = emb
					d.Summary = fmt.Sprintf("Event %d of batch %d: the agent called a tool to search the experience index and found %d results", i, it, i*7)
					docs[i] = d
				}
				return docs
			}
			ctx := context.Background()
			var elapsed time.Duration
			b.ResetTimer()
			for it := range b.N {
				b.StopTimer()
				docs := mk(it)
				b.StartTimer()
				start := time.Now()
				for _, r := range ix.Write(ctx, docs) {
					if r.Err != nil || !r.Created {
						b.Fatal(r)
					}
				}
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "docs/s")
			b.ReportMetric(float64(ix.bulkRequests.Load())/float64(b.N), "requests/op")
		})
	}
}
