package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"engram/query"
	"engram/query/expr"
)

var _ query.SortedReader = (*Reader)(nil)

// Time order (query.SortTime): newest first by ts_unix_ms, equal
// timestamps by event_id descending. A position is (ms, event id); its
// cursor is "m<ms>.<event id>", and the listing continued from it holds
// the positions below it. Seek's cursor (ms+1, "") holds everything at or
// before ms, as no event id is below "".

// tpos is a position in time order.
type tpos struct {
	ms int64
	id string
}

// less orders positions ascending.
func (a tpos) less(b tpos) bool { return a.ms < b.ms || a.ms == b.ms && a.id < b.id }

func timeCursor(p tpos) query.Cursor {
	return query.Cursor(base64.RawURLEncoding.EncodeToString([]byte("m" + strconv.FormatInt(p.ms, 10) + "." + p.id)))
}

// parseTime reads a time cursor; "" is nil (the newest).
func parseTime(c query.Cursor) (*tpos, error) {
	if c == "" {
		return nil, nil
	}
	s, err := decode(c)
	if err != nil || s[0] != 'm' {
		return nil, errCursor
	}
	ms, id, ok := strings.Cut(s[1:], ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return nil, errCursor
	}
	return &tpos{n, id}, nil
}

// List is the documents matching q.Expr in q.Sort, newest first.
func (r *Reader) List(ctx context.Context, q query.ListQuery) (query.Page, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return query.Page{}, err
	}
	if q.Sort == query.SortIndexed {
		return r.Recent(ctx, q.Expr, q.After, q.Limit)
	}
	e, err := parse(q.Expr)
	if err != nil {
		return query.Page{}, err
	}
	after, err := parseTime(q.After)
	if err != nil {
		return query.Page{}, err
	}
	limit := pageLimit(q.Limit, maxLimit)
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return query.Page{}, nil
	}
	pos, err := r.timeWalk(ctx, r.q, p, after, limit+1, false)
	if err != nil || len(pos) == 0 {
		return query.Page{}, err
	}
	seqs := make([]int64, len(pos))
	for i, x := range pos {
		seqs[i] = x.seq
	}
	bySeq, err := r.docsBySeq(ctx, seqs)
	if err != nil {
		return query.Page{}, err
	}
	var pg query.Page
	for i, x := range pos {
		if i == limit {
			pg.Next = timeCursor(pos[limit-1].tpos)
			break
		}
		if d := bySeq[x.seq]; d != nil {
			pg.Docs = append(pg.Docs, d)
		}
	}
	return pg, nil
}

// walked is a document met in a time-ordered walk.
type walked struct {
	tpos
	seq int64
	key string // its turn key
}

// timeWalk is the documents matching p after the position (nil: from the
// newest), at most limit, newest first (oldest first with asc). A plan
// with a selective equality (id, turn, trace, session) sorts that
// equality's documents; any other walks the timestamp index.
func (r *Reader) timeWalk(ctx context.Context, q querier2, p *plan, after *tpos, limit int, asc bool) ([]walked, error) {
	var from, where string
	var args []any
	if d := p.drive; d.docs && d != fullScan && d.prio <= keywordField[expr.FieldSession].prio {
		f, fargs := p.filter("d.seq")
		from, where = d.from, d.where+" AND "+f
		args = append(append(args, d.args...), fargs...)
	} else {
		f, fargs := p.filterAll("d.seq")
		from, where, args = "docs d INDEXED BY docs_ts", f, fargs
	}
	if p.match != "" {
		where += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		args = append(args, p.match)
	}
	dir, cmp := "DESC", "<"
	if asc {
		dir, cmp = "ASC", ">"
	}
	if after != nil {
		where += " AND d.ts_unix_ms " + cmp + "= ? AND (d.ts_unix_ms " + cmp + " ? OR d.event_id " + cmp + " ?)"
		args = append(args, after.ms, after.ms, after.id)
	}
	rows, err := q.QueryContext(ctx, "SELECT d.seq, d.ts_unix_ms, d.event_id, d.turn_key FROM "+from+" WHERE "+where+
		" ORDER BY d.ts_unix_ms "+dir+", d.event_id "+dir+" LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var out []walked
	for rows.Next() {
		var w walked
		if err := rows.Scan(&w.seq, &w.ms, &w.id, &w.key); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// querier2 is a *sql.DB or a *sql.Tx, for queries of several rows.
type querier2 interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Seek is the SortTime cursor at the moment at: what is at or before it
// (to the millisecond) follows.
func (r *Reader) Seek(ctx context.Context, at time.Time) (query.Cursor, error) {
	ms := at.UnixMilli()
	if at.Before(time.UnixMilli(ms)) { // before 1970, UnixMilli rounds up
		ms--
	}
	if ms == math.MaxInt64 {
		return "", fmt.Errorf("seek: %s is out of range", at)
	}
	return timeCursor(tpos{ms + 1, ""}), nil
}

// Oldest is the cursor after which List gives the q.Limit oldest matching
// documents ("" when every match fits in one page).
func (r *Reader) Oldest(ctx context.Context, q query.ListQuery) (query.Cursor, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return "", err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return "", err
	}
	limit := pageLimit(q.Limit, maxLimit)
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return "", nil
	}
	if q.Sort == query.SortTime {
		pos, err := r.timeWalk(ctx, r.q, p, nil, limit+1, true)
		if err != nil || len(pos) <= limit {
			return "", err
		}
		return timeCursor(pos[limit].tpos), nil
	}
	f, args := p.filterAll("d.seq")
	if p.match != "" {
		f += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		args = append(args, p.match)
	}
	var seq sql.NullInt64
	err = r.q.QueryRowContext(ctx, "SELECT d.seq FROM docs d WHERE "+f+" ORDER BY d.seq LIMIT 1 OFFSET ?", append(args, limit)...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !seq.Valid {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return seqCursor(seq.Int64), nil
}

// OldestTurns is the cursor after which ListTurns gives the q.Limit turns
// whose newest matching document is oldest ("" when every turn fits in
// one page): the position of the turn just above them, found by the
// database grouping the matches by turn rather than by reading every page.
func (r *Reader) OldestTurns(ctx context.Context, q query.ListQuery) (query.Cursor, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return "", err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return "", err
	}
	limit := pageLimit(q.Limit, maxTurnsLimit)
	if q.Sort == query.SortIndexed && e.Empty() && r.tenant == "" {
		// As Turns: the turns table, whose last_seq is indexed.
		return r.oldestSeq(ctx, "SELECT last_seq FROM turns ORDER BY last_seq LIMIT 1 OFFSET ?", limit)
	}
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return "", nil
	}
	f, args := p.filterAll("d.seq")
	if p.match != "" {
		f += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		args = append(args, p.match)
	}
	if q.Sort == query.SortIndexed {
		return r.oldestSeq(ctx, "SELECT max(d.seq) AS m FROM docs d WHERE "+f+" GROUP BY d.turn_key ORDER BY m LIMIT 1 OFFSET ?", limit, args...)
	}
	var at tpos
	err = r.q.QueryRowContext(ctx, `SELECT ms, id FROM (SELECT d.ts_unix_ms AS ms, d.event_id AS id,
  row_number() OVER (PARTITION BY d.turn_key ORDER BY d.ts_unix_ms DESC, d.event_id DESC) AS n
  FROM docs d WHERE `+f+`) WHERE n = 1 ORDER BY ms, id LIMIT 1 OFFSET ?`, append(args, limit)...).Scan(&at.ms, &at.id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return timeCursor(at), nil
}

// oldestSeq is the seq cursor of the one-column query's answer ("" with
// none: every turn fits in the page).
func (r *Reader) oldestSeq(ctx context.Context, q string, limit int, args ...any) (query.Cursor, error) {
	var seq sql.NullInt64
	err := r.q.QueryRowContext(ctx, q, append(args, limit)...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !seq.Valid {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return seqCursor(seq.Int64), nil
}

// ListTurns is one row per turn in q.Sort, newest first.
func (r *Reader) ListTurns(ctx context.Context, q query.ListQuery) (query.TurnPage, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return query.TurnPage{}, err
	}
	if q.Sort == query.SortIndexed {
		return r.Turns(ctx, q.Expr, q.After, q.Limit)
	}
	e, err := parse(q.Expr)
	if err != nil {
		return query.TurnPage{}, err
	}
	before, err := parseTime(q.After)
	if err != nil {
		return query.TurnPage{}, err
	}
	limit := pageLimit(q.Limit, maxTurnsLimit)
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return query.TurnPage{}, nil
	}
	tx, err := r.q.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
	}
	defer tx.Rollback()
	// As filteredTurns, walking in time order: a turn met in the walk was
	// shown on an earlier page when its newest matching document is at or
	// above the cursor.
	seen := map[string]bool{}
	var out []*turnAcc
	walk, chunk := before, 4*(limit+1)
	for len(out) <= limit {
		need := limit + 1 - len(out)
		ws, err := r.timeWalk(ctx, tx, p, walk, chunk, false)
		if err != nil {
			return query.TurnPage{}, err
		}
		var keys []string
		n := 0
		for _, w := range ws {
			if len(keys) == need {
				break
			}
			n++
			walk = &w.tpos
			if !seen[w.key] {
				seen[w.key] = true
				keys = append(keys, w.key)
			}
		}
		if len(keys) > 0 {
			accs, err := sumTurns(ctx, tx, p, r.tenant, keys)
			if err != nil {
				return query.TurnPage{}, err
			}
			for _, k := range keys {
				if a := accs[k]; a != nil && (before == nil || a.newest.less(*before)) {
					out = append(out, a)
				}
			}
		}
		if n == len(ws) && len(ws) < chunk {
			break // no more matching documents
		}
		chunk = min(2*chunk, 1<<16)
	}
	var pg query.TurnPage
	for i, a := range out {
		if i == limit {
			pg.Next = timeCursor(out[limit-1].newest)
			break
		}
		pg.Turns = append(pg.Turns, a.TurnSummary)
	}
	return pg, nil
}
