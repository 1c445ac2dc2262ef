package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// turnCols are the columns of turns an upsert gives, in its VALUES order.
var turnCols = []string{"turn_key", "session_id", "agent_id", "tenant_id", "n_events",
	"first_ts_ms", "last_ts_ms", "any_failed", "max_importance", "first_seq", "last_seq"}

// turnUpsertRows is how many turns one execution of the prepared upsert
// takes: one statement per turn cost more CPU than the rows it writes (a
// step, a reset and database/sql's bookkeeping each), and a batch of a few
// hundred documents rarely has more turns than this.
const turnUpsertRows = 16

// turnUpsertSQL upserts rows turns, one VALUES tuple each (distinct turn
// keys: a key given twice would be added twice). What it adds to a stored
// row is what batchSQL's window-function upsert added before the batch's
// turns were summed up in Go (turnBatch): the stored session, agent and
// tenant win over the batch's, which are the turn's first non-NULL ones.
func turnUpsertSQL(rows int) string {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(turnCols)), ", ") + ")"
	return "INSERT INTO turns(" + strings.Join(turnCols, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ") + "\n" + turnsOnConflict
}

// turnsOnConflict adds a batch's sum of a turn (excluded) to the stored
// row of the turn.
const turnsOnConflict = `  ON CONFLICT(turn_key) DO UPDATE SET
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

// Where the insert's arguments (rowArgs, insertColumns order) hold what a
// turn sums up.
var (
	argTurnKey    = slices.Index(insertColumns, "turn_key")
	argSession    = slices.Index(insertColumns, "session_id")
	argAgent      = slices.Index(insertColumns, "agent_id")
	argTenant     = slices.Index(insertColumns, "tenant_id")
	argTS         = slices.Index(insertColumns, "ts_unix_ms")
	argSuccess    = slices.Index(insertColumns, "success")
	argImportance = slices.Index(insertColumns, "importance_score")
	argEmbedding  = slices.Index(insertColumns, "embedding") // float32s, for vec_blocks
	argTs         = slices.Index(insertColumns, "ts_unix_ms")
	argType       = slices.Index(insertColumns, "event_type")
)

// turnSum is what one batch adds to one turn, as turnCols.
type turnSum struct {
	key                    string
	session, agent, tenant any // the first non-NULL in seq order, or nil
	n, firstTS, lastTS     int64
	failed                 int64 // 1 when a document has success = 0
	maxImp                 float64
	firstSeq, lastSeq      int64
}

// turnBatch sums up, per turn, the documents a batch created, from the
// very arguments their rows were inserted with.
type turnBatch struct {
	at   map[string]int // turn key → index in sums
	sums []turnSum
}

// add counts the created row seq, inserted with args a. Rows are added in
// insertion order, which is seq order (AUTOINCREMENT only grows).
func (b *turnBatch) add(seq int64, a []any) {
	key := a[argTurnKey].(string)
	ts := a[argTS].(int64)
	imp := a[argImportance].(float64)
	var failed int64
	if s, ok := a[argSuccess].(int64); ok && s == 0 {
		failed = 1
	}
	i, ok := b.at[key]
	if !ok {
		if b.at == nil {
			b.at = make(map[string]int)
		}
		b.at[key] = len(b.sums)
		b.sums = append(b.sums, turnSum{key: key, session: a[argSession], agent: a[argAgent], tenant: a[argTenant],
			n: 1, firstTS: ts, lastTS: ts, failed: failed, maxImp: imp, firstSeq: seq, lastSeq: seq})
		return
	}
	t := &b.sums[i]
	t.session = firstNonNil(t.session, a[argSession])
	t.agent = firstNonNil(t.agent, a[argAgent])
	t.tenant = firstNonNil(t.tenant, a[argTenant])
	t.n++
	t.firstTS, t.lastTS = min(t.firstTS, ts), max(t.lastTS, ts)
	t.failed = max(t.failed, failed)
	t.maxImp = max(t.maxImp, imp)
	t.firstSeq, t.lastSeq = min(t.firstSeq, seq), max(t.lastSeq, seq)
}

func firstNonNil(have, next any) any {
	if have != nil {
		return have
	}
	return next
}

// upsert writes the sums with many, the prepared turnUpsertSQL of rows
// tuples (turnUpsertRows), and the rest with one, that of a single tuple.
func (b *turnBatch) upsert(ctx context.Context, many *sql.Stmt, rows int, one *sql.Stmt) error {
	args := make([]any, 0, rows*len(turnCols))
	sums := b.sums
	for len(sums) > 0 {
		st, k := one, 1
		if len(sums) >= rows {
			st, k = many, rows
		}
		args = args[:0]
		for _, t := range sums[:k] {
			args = append(args, t.key, t.session, t.agent, t.tenant, t.n,
				t.firstTS, t.lastTS, t.failed, t.maxImp, t.firstSeq, t.lastSeq)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("turns: %w", err)
		}
		sums = sums[k:]
	}
	return nil
}
