package sqliteindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/internal/fsfloor"
)

// BenchmarkInsertRows times only the docs inserts of a batch of 160 new
// documents, inside a transaction rolled back after each iteration: one
// prepared statement per row (what writeTx does) against rows=N documents
// per statement. cpu-µs/doc is the process's CPU.
func BenchmarkInsertRows(b *testing.B) {
	for _, dim := range []int{8, 1536} {
		for _, rows := range []int{1, 8, 16, 32} {
			b.Run(fmt.Sprintf("dim=%d/rows=%d", dim, rows), func(b *testing.B) {
				benchInsertRows(b, dim, rows)
			})
		}
	}
}

func benchInsertRows(b *testing.B, dim, rows int) {
	const batch = 160
	db, _ := openTest(b)
	ctx := context.Background()
	emb := make([]float64, dim)
	for i := range emb {
		emb[i] = float64(i%97)/97 - 0.0123456789
	}
	mustWrite(b, db, docsOf(b, 0, batch, 4, emb)...) // an index that is not empty
	var args []any
	for _, d := range docsOf(b, batch, batch, 4, emb) {
		a, err := rowArgs(d, "2026-05-08T22:31:25.000Z")
		if err != nil {
			b.Fatal(err)
		}
		args = append(args, a...)
	}
	st, err := db.w.Prepare(insertManySQL(rows))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := len(insertColumns) * rows
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tx, err := db.w.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		s := tx.Stmt(st)
		b.StartTimer()
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		for i := 0; i < len(args); i += n {
			if _, err = s.Exec(args[i : i+n]...); err != nil {
				break
			}
		}
		elapsed, cpu = elapsed+time.Since(start), cpu+fsfloor.CPUTime()-cpu0
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*batch), "ns/doc")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*batch), "cpu-µs/doc")
}
