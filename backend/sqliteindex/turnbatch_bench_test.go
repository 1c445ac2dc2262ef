package sqliteindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/internal/fsfloor"
)

// windowTurnsSQL is the statement turnBatch replaced (in batchSQL until
// then), kept to measure against.
const windowTurnsSQL = `INSERT INTO turns(turn_key, session_id, agent_id, tenant_id, n_events,
                  first_ts_ms, last_ts_ms, any_failed, max_importance, first_seq, last_seq)
  SELECT turn_key, max(session_id), max(agent_id), max(tenant_id),
         count(*), min(ts_unix_ms), max(ts_unix_ms), max(success IS 0), max(importance_score), min(seq), max(seq)
  FROM (SELECT turn_key, ts_unix_ms, success, importance_score, seq,
               first_value(session_id) OVER (PARTITION BY turn_key ORDER BY session_id IS NULL, seq) AS session_id,
               first_value(agent_id)   OVER (PARTITION BY turn_key ORDER BY agent_id IS NULL, seq)   AS agent_id,
               first_value(tenant_id)  OVER (PARTITION BY turn_key ORDER BY tenant_id IS NULL, seq)  AS tenant_id
        FROM docs WHERE seq >= ?1)
  WHERE true GROUP BY turn_key
  ON CONFLICT(turn_key) DO UPDATE SET
    session_id     = coalesce(turns.session_id, excluded.session_id),
    agent_id       = coalesce(turns.agent_id, excluded.agent_id),
    tenant_id      = coalesce(turns.tenant_id, excluded.tenant_id),
    n_events       = turns.n_events + excluded.n_events,
    first_ts_ms    = min(turns.first_ts_ms, excluded.first_ts_ms),
    last_ts_ms     = max(turns.last_ts_ms, excluded.last_ts_ms),
    any_failed     = max(turns.any_failed, excluded.any_failed),
    max_importance = max(turns.max_importance, excluded.max_importance),
    first_seq      = min(turns.first_seq, excluded.first_seq),
    last_seq       = max(turns.last_seq, excluded.last_seq)`

// BenchmarkTurnsUpsert times only what a batch of 165 new documents adds
// to turns (half of the batch's turns go on from an earlier batch), the
// way writeTx did it before (window) and does now (go-16: the multi-row
// upsert; go-1: one statement per turn), inside a transaction that is
// rolled back after each iteration. cpu-µs/doc is the process's CPU.
func BenchmarkTurnsUpsert(b *testing.B) {
	for _, perTurn := range []int{1, 4} {
		for _, dim := range []int{8, 1536} {
			for _, how := range []string{"window", "go-1", "go-16"} {
				b.Run(fmt.Sprintf("events/turn=%d/dim=%d/%s", perTurn, dim, how), func(b *testing.B) {
					benchTurnsUpsert(b, perTurn, dim, how)
				})
			}
		}
	}
}

func benchTurnsUpsert(b *testing.B, perTurn, dim int, how string) {
	const batch = 165
	db, _ := openTest(b)
	ctx := context.Background()
	emb := make([]float64, dim)
	for i := range emb {
		emb[i] = float64(i%97)/97 - 0.0123456789
	}
	// The committed batch before: the timed one continues half its turns.
	mustWrite(b, db, docsOf(b, 0, batch, perTurn, emb)...)
	var args [][]any
	for _, d := range docsOf(b, batch/2, batch, perTurn, emb) {
		a, err := rowArgs(d, "2026-05-08T22:31:25.000Z")
		if err != nil {
			b.Fatal(err)
		}
		args = append(args, a)
	}
	window, err := db.w.Prepare(windowTurnsSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer window.Close()
	one, err := db.w.Prepare(turnUpsertSQL(1))
	if err != nil {
		b.Fatal(err)
	}
	defer one.Close()
	many, err := db.w.Prepare(turnUpsertSQL(16))
	if err != nil {
		b.Fatal(err)
	}
	defer many.Close()
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tx, err := db.w.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		seqs := make([]int64, len(args))
		for i, a := range args {
			r, err := tx.Stmt(db.ins).Exec(a...)
			if err != nil {
				b.Fatal(err)
			}
			if seqs[i], err = r.LastInsertId(); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		switch how {
		case "window":
			_, err = tx.Stmt(window).Exec(seqs[0])
		default:
			var t turnBatch
			for i, a := range args {
				t.add(seqs[i], a)
			}
			if how == "go-16" {
				err = t.upsert(ctx, tx.Stmt(many), 16, tx.Stmt(one))
			} else {
				err = t.upsert(ctx, tx.Stmt(one), 1, tx.Stmt(one))
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
