package sqliteindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/internal/fsfloor"
	"engram/model"
)

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
