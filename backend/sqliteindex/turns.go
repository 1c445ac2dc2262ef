package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
)

// Turn is every event of one turn in causal order: phase, then timestamp
// (to the millisecond), then eventId. An unknown key is ErrNotFound.
func (r *Reader) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	w, args := r.tenantWhere()
	q := "SELECT d.seq, " + r.db.DocColumns(ctx) + " FROM docs d WHERE d.turn_key = ? AND " + w +
		" ORDER BY d.phase, d.ts_unix_ms, d.event_id"
	docs, _, _, err := r.docs(ctx, q, append([]any{key}, args...)...)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("turn %s: %w", model.Quote(key), backend.ErrNotFound)
	}
	return docs, nil
}

// Turns is one row per turn, newest first (by the turn's latest ingested
// document). With a filter the turns without a matching document are left
// out, and a turn's place is its latest matching document's; its totals
// are the whole turn's (of the reader's tenant).
func (r *Reader) Turns(ctx context.Context, s string, after query.Cursor, limit int) (query.TurnPage, error) {
	e, err := parse(s)
	if err != nil {
		return query.TurnPage{}, err
	}
	before, err := parseBefore(after)
	if err != nil {
		return query.TurnPage{}, err
	}
	limit = pageLimit(limit, maxTurnsLimit)
	if e.Empty() && r.tenant == "" {
		return r.allTurns(ctx, before, limit)
	}
	return r.filteredTurns(ctx, newPlan(e, r.now(), r.tenant, false), before, limit)
}

// allTurns reads the turns table.
func (r *Reader) allTurns(ctx context.Context, before int64, limit int) (query.TurnPage, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT turn_key, session_id, agent_id, tenant_id, n_events,
  first_ts_ms, last_ts_ms, any_failed, max_importance, last_seq
  FROM turns WHERE last_seq < ? ORDER BY last_seq DESC LIMIT ?`, before, limit+1)
	if err != nil {
		return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var (
		p    query.TurnPage
		last []int64
	)
	for rows.Next() {
		var (
			t                    query.TurnSummary
			session, agent, tent sql.NullString
			first, lastTS        sql.NullInt64
			maxImp               sql.NullFloat64
			seq                  int64
		)
		if err := rows.Scan(&t.Key, &session, &agent, &tent, &t.Events, &first, &lastTS, &t.AnyFailed, &maxImp, &seq); err != nil {
			return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
		}
		t.SessionID, t.AgentID, t.TenantID = session.String, agent.String, tent.String
		t.First, t.Last = msTime(first.Int64), msTime(lastTS.Int64)
		t.MaxImportance = maxImp.Float64
		p.Turns = append(p.Turns, t)
		last = append(last, seq)
	}
	if err := rows.Err(); err != nil {
		return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
	}
	if len(p.Turns) > limit {
		p.Turns = p.Turns[:limit]
		p.Next = seqCursor(last[limit-1])
	}
	return p, r.turnDetails(ctx, p.Turns)
}

// turnDetails fills in what the turns table does not hold (results,
// latency, summary) from the turns' documents.
func (r *Reader) turnDetails(ctx context.Context, turns []query.TurnSummary) error {
	if len(turns) == 0 {
		return nil
	}
	keys := make([]string, len(turns))
	for i, t := range turns {
		keys[i] = t.Key
	}
	accs, err := sumTurns(ctx, r.q, nil, r.tenant, keys)
	if err != nil {
		return err
	}
	for i := range turns {
		if a := accs[turns[i].Key]; a != nil {
			t := &turns[i]
			t.Failures, t.Successes, t.LatencyMs, t.Summary = a.Failures, a.Successes, a.LatencyMs, a.Summary
		}
	}
	return nil
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// turnAcc sums up one turn (sumTurns).
type turnAcc struct {
	query.TurnSummary
	lastSeq int64
	// newest is the position of its newest matching document in time
	// order (ListTurns with query.SortTime).
	newest tpos
	// head is its first document in causal order (whose summary the row
	// shows).
	head causalPos
}

// filteredTurns walks the matching documents newest first, collecting turn
// keys until it has limit+1 turns not already shown (a turn was shown on an
// earlier page when it has a matching document at or above before), then
// sums up those turns over all their documents. All its queries run
// in one read transaction: one snapshot, however many chunks it reads.
func (r *Reader) filteredTurns(ctx context.Context, p *plan, before int64, limit int) (query.TurnPage, error) {
	if p.none {
		return query.TurnPage{}, nil
	}
	tx, err := r.q.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
	}
	defer tx.Rollback()

	if err := r.boundTime(ctx, tx, p); err != nil {
		return query.TurnPage{}, err
	}
	if err := r.tune(ctx, tx, p, 4*(limit+1)); err != nil {
		return query.TurnPage{}, err
	}
	if p.none {
		return query.TurnPage{}, nil
	}
	seen := map[string]bool{}
	var out []*turnAcc
	pos, chunk := before, 4*(limit+1)
	for len(out) <= limit {
		need := limit + 1 - len(out)
		inner, args := p.newest(pos, chunk)
		rows, err := tx.QueryContext(ctx, "SELECT d.turn_key, d.seq FROM ("+inner+") p JOIN docs d ON d.seq = p.seq ORDER BY p.seq DESC", args...)
		if err != nil {
			return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
		}
		var keys []string
		n := 0
		for len(keys) < need && rows.Next() {
			var key string
			if err := rows.Scan(&key, &pos); err != nil {
				_ = rows.Close()
				return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
			}
			n++
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
			}
		}
		err = rows.Err()
		_ = rows.Close()
		if err != nil {
			return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
		}
		if len(keys) > 0 {
			accs, err := sumTurns(ctx, tx, p, r.tenant, keys)
			if err != nil {
				return query.TurnPage{}, err
			}
			for _, k := range keys {
				if a := accs[k]; a != nil && a.lastSeq < before {
					out = append(out, a)
				}
			}
		}
		if n < chunk && len(keys) < need {
			break // no more matching documents
		}
		chunk = min(2*chunk, 1<<16)
	}
	var pg query.TurnPage
	for i, a := range out {
		if i == limit {
			pg.Next = seqCursor(out[limit-1].lastSeq)
			break
		}
		pg.Turns = append(pg.Turns, a.TurnSummary)
	}
	return pg, nil
}

// sumTurns sums up the turns keys over all their documents (of the
// reader's tenant): a row's totals are the whole turn's, not only its
// matching documents'. The turns with no document matching p are left out,
// and lastSeq and newest are those of a turn's matching documents (what
// orders and pages the listing). p nil matches every document.
func sumTurns(ctx context.Context, tx sumQuerier, p *plan, tenant string, keys []string) (map[string]*turnAcc, error) {
	b, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	list := string(b)
	const inKeys = "d.turn_key IN (SELECT value FROM json_each(?))"
	match, margs := "1", []any(nil)
	if p != nil {
		text := "1"
		if p.match != "" {
			// The matches among the seqs of these turns only: a bounded
			// scan of the full-text index.
			var lo, hi sql.NullInt64
			if err := tx.QueryRowContext(ctx, "SELECT min(d.seq), max(d.seq) FROM docs d INDEXED BY docs_turn WHERE "+inKeys, list).Scan(&lo, &hi); err != nil {
				return nil, fmt.Errorf("sqlite: %w", err)
			}
			text = "d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? AND rowid BETWEEN ? AND ?)"
			margs = append(margs, p.match, lo.Int64, hi.Int64)
		}
		f, fargs := p.filterAll("d.seq")
		match, margs = "("+text+" AND "+f+")", append(margs, fargs...)
	}
	where, wargs := inKeys, []any{list}
	if tenant != "" {
		where, wargs = where+" AND d.tenant_id = ?", append(wargs, tenant)
	}
	q := `SELECT d.turn_key, d.seq, d.session_id, d.agent_id, d.tenant_id, d.ts_unix_ms, d.success, d.importance_score, d.event_id,
  d.phase, d.summary, d.latency_ms, CASE WHEN ` + match + ` THEN 1 ELSE 0 END
  FROM docs d INDEXED BY docs_turn WHERE ` + where + " ORDER BY d.seq"
	rows, err := tx.QueryContext(ctx, q, append(margs, wargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	accs := make(map[string]*turnAcc, len(keys))
	matched := make(map[string]bool, len(keys))
	for rows.Next() {
		var (
			key, session  string
			eventID       string
			agent, tenant sql.NullString
			seq, ts       int64
			success       sql.NullInt64
			importance    float64
			phase         int
			summary       string
			latency       sql.NullInt64
			m             bool
		)
		if err := rows.Scan(&key, &seq, &session, &agent, &tenant, &ts, &success, &importance, &eventID,
			&phase, &summary, &latency, &m); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		a := accs[key]
		if a == nil {
			a = &turnAcc{TurnSummary: query.TurnSummary{Key: key, First: msTime(ts), Last: msTime(ts), MaxImportance: importance}}
			a.head = causalPos{phase, ts, eventID}
			a.Summary = summary
			accs[key] = a
		}
		if m {
			matched[key] = true
			a.lastSeq = seq
			if p := (tpos{ts, eventID}); a.newest.less(p) {
				a.newest = p
			}
		}
		a.Events++
		if a.SessionID == "" {
			a.SessionID = session
		}
		if a.AgentID == "" {
			a.AgentID = agent.String
		}
		if a.TenantID == "" {
			a.TenantID = tenant.String
		}
		if t := msTime(ts); t.Before(a.First) {
			a.First = t
		} else if t.After(a.Last) {
			a.Last = t
		}
		if success.Valid {
			if success.Int64 == 0 {
				a.Failures++
				a.AnyFailed = true
			} else {
				a.Successes++
			}
		}
		if latency.Valid {
			a.LatencyMs += latency.Int64
		}
		if c := (causalPos{phase, ts, eventID}); c.less(a.head) {
			a.head, a.Summary = c, summary
		}
		a.MaxImportance = math.Max(a.MaxImportance, importance)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	for k := range accs {
		if !matched[k] {
			delete(accs, k)
		}
	}
	return accs, nil
}

// sumQuerier is a *sql.DB or a *sql.Tx.
type sumQuerier interface {
	querier
	querier2
}

// causalPos is a document's place in its turn's causal order: phase, then
// timestamp, then event id.
type causalPos struct {
	phase int
	ms    int64
	id    string
}

func (a causalPos) less(b causalPos) bool {
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	return tpos{a.ms, a.id}.less(tpos{b.ms, b.id})
}
