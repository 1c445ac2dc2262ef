package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"engram/internal/fsfloor"
	"engram/model"
)

// BenchmarkInsertRows times only the docs inserts of a batch of 160 new
// documents, inside a transaction rolled back after each iteration: one
// prepared statement per row (rows=1, as writeTx did) against rows=N
// documents per statement (insertManySQL). cpu-µs/doc is the process's CPU.
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
	emb := benchEmbedding(dim)
	mustWrite(b, db, docsOf(b, 0, batch, 4, emb)...) // an index that is not empty
	var args []any
	for _, a := range argsOf(b, docsOf(b, batch, batch, 4, emb)) {
		args = append(args, a...)
	}
	st, err := db.w.Prepare(insertManySQL(rows))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := len(insertColumns) * rows
	timeInTx(b, db, batch, nil, func(tx *sql.Tx) error {
		s := tx.Stmt(st)
		for i := 0; i < len(args); i += n {
			if _, err := s.Exec(args[i : i+n]...); err != nil {
				return err
			}
		}
		return nil
	})
}

// timeInTx runs, b.N times, setUp and then step in a transaction rolled
// back afterwards, timing step only, and reports its wall and CPU time
// (of the whole process) per document, for docs documents a step.
func timeInTx(b *testing.B, db *DB, docs int, setUp func(*sql.Tx), step func(*sql.Tx) error) {
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tx, err := db.w.BeginTx(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if setUp != nil {
			setUp(tx)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		err = step(tx)
		elapsed, cpu = elapsed+time.Since(start), cpu+fsfloor.CPUTime()-cpu0
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*docs), "ns/doc")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*docs), "cpu-µs/doc")
}

// benchEmbedding is an embedding of dim components.
func benchEmbedding(dim int) []float64 {
	emb := make([]float64, dim)
	for i := range emb {
		emb[i] = float64(i%97)/97 - 0.0123456789
	}
	return emb
}

// argsOf is the insert arguments of docs.
func argsOf(b *testing.B, docs []*model.IndexDoc) [][]any {
	var args [][]any
	for _, d := range docs {
		a, err := rowArgs(d, "2026-05-08T22:31:25.000Z")
		if err != nil {
			b.Fatal(err)
		}
		args = append(args, a)
	}
	return args
}
