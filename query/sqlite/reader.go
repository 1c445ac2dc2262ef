// Package sqlite implements query.Reader over engram's embedded SQLite index
// (package ingest/sqlindex). It only reads, through query_only connections,
// and works while another process writes (WAL): every call sees the batches
// committed before it started.
package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"engram/ingest/sqlindex"
	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// Page sizes: a limit <= 0 asks for DefaultLimit; larger limits than
// MaxLimit are cut to it.
const (
	DefaultLimit = 100
	MaxLimit     = 10000
	// MaxTurnsLimit caps a page of turns.
	MaxTurnsLimit = 1000
	// DefaultK is the number of neighbours of Similar when k <= 0.
	DefaultK = 10
)

// Reader is a query.Reader over a sqlindex database. Its methods are safe
// for concurrent use.
type Reader struct {
	db     *sqlindex.DB
	q      *sql.DB
	tenant string
	path   string
	// now is the clock relative times resolve against.
	now func() time.Time
}

var _ query.Reader = (*Reader)(nil)

// Open opens the index at path for reading. The file must exist and hold an
// index (sqlindex creates it on its first write).
func Open(path string, opts query.Options) (*Reader, error) {
	db, err := sqlindex.OpenReadOnly(path, sqlindex.Options{})
	if err != nil {
		return nil, err
	}
	return &Reader{db: db, q: db.SQL(), tenant: opts.Tenant, path: path, now: time.Now}, nil
}

// Describe names the index and the tenant scope.
func (r *Reader) Describe() string {
	if r.tenant != "" {
		return "sqlite " + r.path + " (tenant " + model.Quote(r.tenant) + ")"
	}
	return "sqlite " + r.path
}

// Close closes the database.
func (r *Reader) Close() error { return r.db.Close() }

func pageLimit(limit, max int) int {
	if limit <= 0 {
		return min(DefaultLimit, max)
	}
	return min(limit, max)
}

func parse(s string) (*expr.Expr, error) {
	e, err := expr.Parse(s)
	if err != nil {
		return nil, err // a *expr.SyntaxError, as is: its column is the caller's
	}
	return e, nil
}

// tenantWhere is the tenant scope as a condition on docs d, and its
// arguments.
func (r *Reader) tenantWhere() (string, []any) {
	if r.tenant == "" {
		return "1", nil
	}
	return "d.tenant_id = ?", []any{r.tenant}
}

// Recent is the newest documents first, by ingestion order.
func (r *Reader) Recent(ctx context.Context, s string, after query.Cursor, limit int) (query.Page, error) {
	e, err := parse(s)
	if err != nil {
		return query.Page{}, err
	}
	return r.bySeq(ctx, newPlan(e, r.now(), r.tenant, false), after, limit)
}

// bySeq is the documents matching p, newest first, below the after cursor.
func (r *Reader) bySeq(ctx context.Context, p *plan, after query.Cursor, limit int) (query.Page, error) {
	before, err := parseBefore(after)
	if err != nil {
		return query.Page{}, err
	}
	limit = pageLimit(limit, MaxLimit)
	if err := r.pickTimeDriver(ctx, r.q, p); err != nil {
		return query.Page{}, err
	}
	if err := r.tune(ctx, r.q, p, limit+1); err != nil {
		return query.Page{}, err
	}
	if p.none {
		return query.Page{}, nil
	}
	inner, args := p.newest(before, limit+1)
	q := "SELECT d.seq, d.doc FROM (" + inner + ") p JOIN docs d ON d.seq = p.seq ORDER BY p.seq DESC"
	docs, seqs, _, err := r.docs(ctx, q, args...)
	if err != nil {
		return query.Page{}, err
	}
	pg := query.Page{Docs: docs}
	if len(docs) > limit {
		pg.Docs = docs[:limit]
		pg.Next = seqCursor(seqs[limit-1])
	}
	return pg, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// pickTimeDriver makes a plan that would scan all of docs drive from its
// time range instead, when the range holds few documents.
func (r *Reader) pickTimeDriver(ctx context.Context, q querier, p *plan) error {
	if !p.hasTime {
		return nil
	}
	if p.tsLo >= p.tsHi {
		p.none = true // an empty range
	}
	if p.none || p.drive != fullScan {
		return nil
	}
	var n int
	if err := q.QueryRowContext(ctx, timeCount, p.tsLo, p.tsHi, maxTimeDriven+1).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if n <= maxTimeDriven {
		p.drive = p.timeDriver()
	}
	return nil
}

// tune decides, for a plan driven by the full-text index, how to probe its
// most selective equality: per candidate (an index lookup each, about
// 0.45 µs) or as a set listed once (about 0.15 µs per member, then
// 0.03 µs per candidate). A ranked search meets every match, so the set
// pays when it is smaller than 2.5 times the matches. A newest-first
// listing stops after want rows, which it expects to find within
// want·N/set matches, so the set pays when set² < 2.5·want·N too.
func (r *Reader) tune(ctx context.Context, q querier, p *plan, want int) error {
	if p.none || p.match == "" || p.eqs == 0 || p.probes[0].in == "" {
		return nil
	}
	var matches int64
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", p.match).Scan(&matches); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	limit := float64(matches) * 2.5
	if want > 0 {
		var n sql.NullInt64
		if err := q.QueryRowContext(ctx, "SELECT max(seq) FROM docs").Scan(&n); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		limit = math.Min(limit, math.Sqrt(2.5*float64(want)*float64(n.Int64)))
	}
	c := p.probes[0]
	var size int64
	if err := q.QueryRowContext(ctx, c.count, append(append([]any{}, c.args...), int64(limit)+1)...).Scan(&size); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if float64(size) < limit && probeMode != probeAlwaysExists || probeMode == probeAlwaysIn {
		p.probes[0] = cond{sql: c.in, args: c.args}
	}
	return nil
}

// probeMode overrides tune's choice, for tests.
var probeMode int

const (
	probeAlwaysExists = 1
	probeAlwaysIn     = 2
)

// docs runs q, whose columns are seq, doc and optionally a rank.
func (r *Reader) docs(ctx context.Context, q string, args ...any) ([]*model.IndexDoc, []int64, []float64, error) {
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, nil, err
	}
	var (
		docs  []*model.IndexDoc
		seqs  []int64
		ranks []float64
	)
	for rows.Next() {
		var (
			seq  int64
			raw  []byte
			rank float64
		)
		dest := []any{&seq, &raw}
		if len(cols) > 2 {
			dest = append(dest, &rank)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, nil, fmt.Errorf("sqlite: %w", err)
		}
		d, err := decodeDoc(raw)
		if err != nil {
			return nil, nil, nil, err
		}
		docs = append(docs, d)
		seqs = append(seqs, seq)
		ranks = append(ranks, rank)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("sqlite: %w", err)
	}
	return docs, seqs, ranks, nil
}

func decodeDoc(raw []byte) (*model.IndexDoc, error) {
	d := new(model.IndexDoc)
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("sqlite: stored document: %w", err)
	}
	return d, nil
}

// TailStart is the cursor of the newest document now indexed.
func (r *Reader) TailStart(ctx context.Context) (query.Cursor, error) {
	var seq sql.NullInt64
	if err := r.q.QueryRowContext(ctx, "SELECT max(seq) FROM docs").Scan(&seq); err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return seqCursor(seq.Int64), nil
}

// Tail is every document indexed after the cursor, oldest first, at most
// limit of them; Next is the cursor to poll from (after itself when there
// is nothing new).
func (r *Reader) Tail(ctx context.Context, after query.Cursor, limit int) (query.Page, error) {
	from, err := parseSeq(after)
	if err != nil {
		return query.Page{}, err
	}
	limit = pageLimit(limit, MaxLimit)
	w, args := r.tenantWhere()
	q := "SELECT d.seq, d.doc FROM docs d WHERE " + w + " AND d.seq > ? ORDER BY d.seq LIMIT ?"
	docs, seqs, _, err := r.docs(ctx, q, append(args, from, limit)...)
	if err != nil {
		return query.Page{}, err
	}
	p := query.Page{Docs: docs, Next: after}
	if len(seqs) > 0 {
		p.Next = seqCursor(seqs[len(seqs)-1])
	}
	return p, nil
}

// Search is the documents matching s: ranked by bm25 when s has free words
// (ties newest first), else newest first.
func (r *Reader) Search(ctx context.Context, s string, after query.Cursor, limit int) (query.Page, error) {
	e, err := parse(s)
	if err != nil {
		return query.Page{}, err
	}
	if !e.HasText() {
		return r.bySeq(ctx, newPlan(e, r.now(), r.tenant, false), after, limit)
	}
	p := newPlan(e, r.now(), r.tenant, true)
	limit = pageLimit(limit, MaxLimit)
	var rank float64
	var seq int64
	if after != "" {
		if rank, seq, err = parseRank(after); err != nil {
			return query.Page{}, err
		}
	}
	if err := r.tune(ctx, r.q, p, 0); err != nil {
		return query.Page{}, err
	}
	if p.none {
		return query.Page{}, nil
	}
	f, fargs := p.filter("f.rowid")
	args := append([]any{p.match}, fargs...)
	page := ""
	if after != "" {
		page = " AND (bm25(docs_fts) > ? OR (bm25(docs_fts) = ? AND f.rowid < ?))"
		args = append(args, rank, rank, seq)
	}
	// Probes run before bm25, which is computed for matching documents only.
	inner := "SELECT f.rowid AS seq, bm25(docs_fts) AS r FROM docs_fts f" + p.join("f.rowid", false) +
		" WHERE docs_fts MATCH ? AND " + f + page + " ORDER BY r, f.rowid DESC LIMIT ?"
	q := "SELECT d.seq, d.doc, p.r FROM (" + inner + ") p JOIN docs d ON d.seq = p.seq ORDER BY p.r, p.seq DESC"
	docs, seqs, ranks, err := r.docs(ctx, q, append(args, limit+1)...)
	if err != nil {
		return query.Page{}, err
	}
	pg := query.Page{Docs: docs}
	if len(docs) > limit {
		pg.Docs = docs[:limit]
		pg.Next = rankCursor(ranks[limit-1], seqs[limit-1])
	}
	return pg, nil
}

// Document is one index document by event id.
func (r *Reader) Document(ctx context.Context, eventID string) (*model.IndexDoc, error) {
	w, args := r.tenantWhere()
	var raw []byte
	err := r.q.QueryRowContext(ctx, "SELECT d.doc FROM docs d WHERE d.event_id = ? AND "+w,
		append([]any{eventID}, args...)...).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("event %s: %w", model.Quote(eventID), query.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return decodeDoc(raw)
}

// Count is how many documents the reader sees.
func (r *Reader) Count(ctx context.Context) (int64, error) {
	w, args := r.tenantWhere()
	var n int64
	if err := r.q.QueryRowContext(ctx, "SELECT count(*) FROM docs d WHERE "+w, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return n, nil
}

// Turn is every event of one turn in causal order: phase, then timestamp
// (to the millisecond), then eventId. An unknown key is ErrNotFound.
func (r *Reader) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	w, args := r.tenantWhere()
	q := "SELECT d.seq, d.doc FROM docs d WHERE d.turn_key = ? AND " + w +
		" ORDER BY d.phase, d.ts_unix_ms, d.event_id"
	docs, _, _, err := r.docs(ctx, q, append([]any{key}, args...)...)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("turn %s: %w", model.Quote(key), query.ErrNotFound)
	}
	return docs, nil
}

// Turns is one row per turn, newest first (by the turn's latest ingested
// document). With a filter (or a tenant) a row sums up the turn's matching
// documents only, and turns without one are left out.
func (r *Reader) Turns(ctx context.Context, s string, after query.Cursor, limit int) (query.TurnPage, error) {
	e, err := parse(s)
	if err != nil {
		return query.TurnPage{}, err
	}
	before, err := parseBefore(after)
	if err != nil {
		return query.TurnPage{}, err
	}
	limit = pageLimit(limit, MaxTurnsLimit)
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
	return p, nil
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// turnAcc sums up the matching documents of one turn.
type turnAcc struct {
	query.TurnSummary
	lastSeq int64
}

// filteredTurns walks the matching documents newest first, collecting turn
// keys until it has limit+1 turns not already shown (a turn was shown on an
// earlier page when it has a matching document at or above before), then
// sums up those turns over their matching documents. All its queries run
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

	if err := r.pickTimeDriver(ctx, tx, p); err != nil {
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
				rows.Close()
				return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
			}
			n++
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return query.TurnPage{}, fmt.Errorf("sqlite: %w", err)
		}
		if len(keys) > 0 {
			accs, err := sumTurns(ctx, tx, p, keys)
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

// sumTurns sums up the matching documents of the turns keys.
func sumTurns(ctx context.Context, tx *sql.Tx, p *plan, keys []string) (map[string]*turnAcc, error) {
	b, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	list := string(b)
	const inKeys = "d.turn_key IN (SELECT value FROM json_each(?))"
	text, args := "1", []any{list}
	if p.match != "" {
		// The matches among the seqs of these turns only: a bounded scan
		// of the full-text index.
		var lo, hi sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT min(d.seq), max(d.seq) FROM docs d INDEXED BY docs_turn WHERE "+inKeys, list).Scan(&lo, &hi); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		text = "d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? AND rowid BETWEEN ? AND ?)"
		args = append(args, p.match, lo.Int64, hi.Int64)
	}
	f, fargs := p.filterAll("d.seq")
	q := `SELECT d.turn_key, d.seq, d.session_id, d.agent_id, d.tenant_id, d.ts_unix_ms, d.success, d.importance_score
  FROM docs d INDEXED BY docs_turn WHERE ` + inKeys + " AND " + text + " AND " + f + " ORDER BY d.seq"
	rows, err := tx.QueryContext(ctx, q, append(args, fargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	accs := make(map[string]*turnAcc, len(keys))
	for rows.Next() {
		var (
			key, session  string
			agent, tenant sql.NullString
			seq, ts       int64
			success       sql.NullInt64
			importance    float64
		)
		if err := rows.Scan(&key, &seq, &session, &agent, &tenant, &ts, &success, &importance); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		a := accs[key]
		if a == nil {
			a = &turnAcc{TurnSummary: query.TurnSummary{Key: key, First: msTime(ts), Last: msTime(ts), MaxImportance: importance}}
			accs[key] = a
		}
		a.Events++
		a.lastSeq = seq
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
		if success.Valid && success.Int64 == 0 {
			a.AnyFailed = true
		}
		a.MaxImportance = math.Max(a.MaxImportance, importance)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return accs, nil
}

// Similar is the k documents nearest to eventID's embedding by cosine
// similarity (the Score), by an exact scan of the embeddings of the same
// dimension; the document itself is left out. A document without an
// embedding has no neighbours.
func (r *Reader) Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error) {
	if k <= 0 {
		k = DefaultK
	}
	k = min(k, MaxLimit)
	w, wargs := r.tenantWhere()
	var (
		seq    int64
		blob   []byte
		dim    int
		target []float64
	)
	err := r.q.QueryRowContext(ctx, "SELECT d.seq, d.embedding, d.embedding_dim FROM docs d WHERE d.event_id = ? AND "+w,
		append([]any{eventID}, wargs...)...).Scan(&seq, &blob, &dim)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("event %s: %w", model.Quote(eventID), query.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if dim == 0 || len(blob) != 4*dim {
		return []query.Scored{}, nil
	}
	target = vector(blob, nil)
	tnorm := norm(target)
	if tnorm == 0 {
		return []query.Scored{}, nil
	}

	rows, err := r.q.QueryContext(ctx, "SELECT d.seq, d.embedding FROM docs d WHERE d.embedding_dim = ? AND d.seq != ? AND "+w,
		append([]any{dim, seq}, wargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	h := &nearest{}
	v := make([]float64, dim)
	for rows.Next() {
		var s int64
		var b sql.RawBytes
		if err := rows.Scan(&s, &b); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		if len(b) != 4*dim {
			continue
		}
		v = vector(b, v)
		n := norm(v)
		if n == 0 {
			continue
		}
		var dot float64
		for i := range v {
			dot += v[i] * target[i]
		}
		c := candidate{s, dot / (n * tnorm)}
		if h.Len() < k {
			heap.Push(h, c)
		} else if c.better((*h)[0]) {
			(*h)[0] = c
			heap.Fix(h, 0)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	best := make([]candidate, h.Len())
	for i := len(best) - 1; i >= 0; i-- {
		best[i] = heap.Pop(h).(candidate)
	}
	if len(best) == 0 {
		return []query.Scored{}, nil
	}
	seqs := make([]int64, len(best))
	for i, c := range best {
		seqs[i] = c.seq
	}
	list, _ := json.Marshal(seqs)
	docs, got, _, err := r.docs(ctx, "SELECT d.seq, d.doc FROM docs d WHERE d.seq IN (SELECT value FROM json_each(?))", string(list))
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]*model.IndexDoc, len(docs))
	for i, d := range docs {
		bySeq[got[i]] = d
	}
	out := make([]query.Scored, 0, len(best))
	for _, c := range best {
		if d := bySeq[c.seq]; d != nil {
			out = append(out, query.Scored{Doc: d, Score: c.score})
		}
	}
	return out, nil
}

// vector decodes a little-endian float32 embedding into v (reused when long
// enough).
func vector(b []byte, v []float64) []float64 {
	n := len(b) / 4
	if cap(v) < n {
		v = make([]float64, n)
	}
	v = v[:n]
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

type candidate struct {
	seq   int64
	score float64
}

// better orders neighbours: higher score, then the newer document.
func (c candidate) better(o candidate) bool {
	if c.score != o.score {
		return c.score > o.score
	}
	return c.seq > o.seq
}

// nearest is a min-heap of the best candidates (the worst on top).
type nearest []candidate

func (h nearest) Len() int           { return len(h) }
func (h nearest) Less(i, j int) bool { return h[j].better(h[i]) }
func (h nearest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nearest) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *nearest) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
