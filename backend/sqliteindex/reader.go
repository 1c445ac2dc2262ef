// Reader implements query.Reader over the embedded SQLite index
// written by DB. It only reads, through query_only connections,
// and works while another process writes (WAL): every call sees the batches
// committed before it started.

package sqliteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// Page sizes: a limit <= 0 asks for defaultLimit; larger limits than
// maxLimit are cut to it.
const (
	defaultLimit = 100
	maxLimit     = 10000
	// maxTurnsLimit caps a page of turns.
	maxTurnsLimit = 1000
	// defaultK is the number of neighbours of Similar when k <= 0.
	defaultK = 10
)

// Reader is a query.Reader over a sqliteindex database. Its methods are safe
// for concurrent use.
type Reader struct {
	db     *DB
	q      *sql.DB
	tenant string
	path   string
	// window is how many of the newest matches a ranked search ranks (0:
	// all); see Search.
	window int
	// now is the clock relative times resolve against.
	now func() time.Time
}

var _ query.Reader = (*Reader)(nil)

// OpenReader opens the index at path for reading. The file must exist and hold an
// index (sqliteindex creates it on its first write).
func OpenReader(path string, opts query.Options) (*Reader, error) {
	db, err := OpenReadOnly(path, Options{})
	if err != nil {
		return nil, err
	}
	return &Reader{db: db, q: db.SQL(), tenant: opts.Tenant, path: path, window: opts.Window(), now: time.Now}, nil
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
		return min(defaultLimit, max)
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
	limit = pageLimit(limit, maxLimit)
	if err := r.boundTime(ctx, r.q, p); err != nil {
		return query.Page{}, err
	}
	if err := r.tune(ctx, r.q, p, limit+1); err != nil {
		return query.Page{}, err
	}
	if p.none {
		return query.Page{}, nil
	}
	inner, args := p.newest(before, limit+1)
	q := "SELECT d.seq, " + r.db.DocColumns(ctx) + " FROM (" + inner + ") p JOIN docs d ON d.seq = p.seq ORDER BY p.seq DESC"
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
	limit := math.Inf(1)
	if want > 0 {
		var n sql.NullInt64
		if err := q.QueryRowContext(ctx, "SELECT max(seq) FROM docs").Scan(&n); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		limit = math.Sqrt(2.5 * float64(want) * float64(n.Int64))
	}
	// Counting every match of a common word walks its whole doclist:
	// only the matches that could lower the limit are counted.
	count, cargs := "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", []any{p.match}
	if !math.IsInf(limit, 1) {
		count = "SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)"
		cargs = append(cargs, int64(limit/2.5)+1)
	}
	var matches int64
	if err := q.QueryRowContext(ctx, count, cargs...).Scan(&matches); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	limit = math.Min(limit, float64(matches)*2.5)
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

// docs runs q, whose columns are seq, the document columns
// (DB.DocColumns) and optionally a rank.
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
	// One row's destinations serve every row: Scan overwrites each (NULL
	// included) and document copies out what it keeps.
	var (
		seq  int64
		row  docRow
		rank float64
	)
	dest := append([]any{&seq}, row.dest()...)
	if len(cols) > len(dest) {
		dest = append(dest, &rank)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, nil, fmt.Errorf("sqlite: %w", err)
		}
		d, err := decodeDoc(&row)
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

func decodeDoc(row *docRow) (*model.IndexDoc, error) {
	d, err := row.document()
	if err != nil {
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
	limit = pageLimit(limit, maxLimit)
	w, args := r.tenantWhere()
	q := "SELECT d.seq, " + r.db.DocColumns(ctx) + " FROM docs d WHERE " + w + " AND d.seq > ? ORDER BY d.seq LIMIT ?"
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

// Document is one index document by event id.
func (r *Reader) Document(ctx context.Context, eventID string) (*model.IndexDoc, error) {
	w, args := r.tenantWhere()
	var row docRow
	err := r.q.QueryRowContext(ctx, "SELECT "+r.db.DocColumns(ctx)+" FROM docs d WHERE d.event_id = ? AND "+w,
		append([]any{eventID}, args...)...).Scan(row.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("event %s: %w", model.Quote(eventID), backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return decodeDoc(&row)
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
