package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
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
` + turnsOnConflict

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
	emb := benchEmbedding(dim)
	// The committed batch before: the timed one continues half its turns.
	mustWrite(b, db, docsOf(b, 0, batch, perTurn, emb)...)
	args := argsOf(b, docsOf(b, batch/2, batch, perTurn, emb))
	stmt := func(q string) *sql.Stmt {
		st, err := db.w.Prepare(q)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	window, one, many := stmt(windowTurnsSQL), stmt(turnUpsertSQL(1)), stmt(turnUpsertSQL(16))
	seqs := make([]int64, len(args))
	insert := func(tx *sql.Tx) {
		for i, a := range args {
			r, err := tx.Stmt(db.ins).Exec(a...)
			if err != nil {
				b.Fatal(err)
			}
			if seqs[i], err = r.LastInsertId(); err != nil {
				b.Fatal(err)
			}
		}
	}
	timeInTx(b, db, batch, insert, func(tx *sql.Tx) error {
		if how == "window" {
			_, err := tx.Stmt(window).Exec(seqs[0])
			return err
		}
		var t turnBatch
		for i, a := range args {
			t.add(seqs[i], a)
		}
		if how == "go-16" {
			return t.upsert(ctx, tx.Stmt(many), 16, tx.Stmt(one))
		}
		return t.upsert(ctx, tx.Stmt(one), 1, tx.Stmt(one))
	})
}
