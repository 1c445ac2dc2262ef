package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"engram/model"
	"engram/query"
)

// Search is the documents matching s: ranked by BM25 when s has free words
// (ties newest first), else newest first. A ranked search ranks the newest
// r.window matching documents (every match when r.window is 0, by FTS5's
// bm25()): ranking every match of a word in most of a million documents
// takes a second, while a page needs only the best few. See rank.go for
// how a window is ranked.
func (r *Reader) Search(ctx context.Context, s string, after query.Cursor, limit int) (query.Page, error) {
	e, err := parse(s)
	if err != nil {
		return query.Page{}, err
	}
	if !e.HasText() {
		return r.bySeq(ctx, newPlan(e, r.now(), r.tenant, false), after, limit)
	}
	p := newPlan(e, r.now(), r.tenant, true)
	limit = pageLimit(limit, maxLimit)
	if r.window > 0 {
		return r.searchWindow(ctx, p, after, limit)
	}
	return r.searchAll(ctx, p, after, limit)
}

// searchAll ranks every match.
func (r *Reader) searchAll(ctx context.Context, p *plan, after query.Cursor, limit int) (query.Page, error) {
	all := &query.Ranking{}
	var rank float64
	var seq int64
	if after != "" {
		var err error
		if rank, seq, err = parseRank(after); err != nil {
			return query.Page{}, err
		}
	}
	if err := r.boundTime(ctx, r.q, p); err != nil {
		return query.Page{}, err
	}
	if err := r.tune(ctx, r.q, p, 0); err != nil {
		return query.Page{}, err
	}
	if p.none {
		return query.Page{Ranking: all}, nil
	}
	f, fargs := p.filter("f.rowid")
	args := append([]any{p.match, p.seqLo, p.seqHi}, fargs...)
	page := ""
	if after != "" {
		page = " AND (bm25(docs_fts) > ? OR (bm25(docs_fts) = ? AND f.rowid < ?))"
		args = append(args, rank, rank, seq)
	}
	// Probes run before bm25, which is computed for matching documents only.
	inner := "SELECT f.rowid AS seq, bm25(docs_fts) AS r FROM docs_fts f" + p.join("f.rowid", false) +
		" WHERE docs_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND " + f + page + " ORDER BY r, f.rowid DESC LIMIT ?"
	q := "SELECT d.seq, " + r.db.DocColumns(ctx) + ", p.r FROM (" + inner + ") p JOIN docs d ON d.seq = p.seq ORDER BY p.r, p.seq DESC"
	docs, seqs, ranks, err := r.docs(ctx, q, append(args, limit+1)...)
	if err != nil {
		return query.Page{}, err
	}
	pg := query.Page{Docs: docs, Ranking: all}
	if len(docs) > limit {
		pg.Docs = docs[:limit]
		pg.Next = rankCursor(ranks[limit-1], seqs[limit-1])
	}
	return pg, nil
}

// ranked is a matching document and its bm25 (lower is better).
type ranked struct {
	seq  int64
	rank float64
}

// before orders a ranking: better bm25, then the newer document.
func (a ranked) before(b ranked) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.seq > b.seq
}

// searchWindow ranks the newest r.window matches at or below the window's
// top seq, the newest document when the first page was asked for: later
// pages rank the same window, whatever was indexed since (bm25's
// statistics move with every document indexed, so the order within the
// window can shift a little between pages written in between).
func (r *Reader) searchWindow(ctx context.Context, p *plan, after query.Cursor, limit int) (query.Page, error) {
	var (
		top   int64
		start int
	)
	if after != "" {
		var err error
		if top, start, err = parseWindow(after); err != nil {
			return query.Page{}, err
		}
	} else if err := r.q.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM docs").Scan(&top); err != nil {
		return query.Page{}, fmt.Errorf("sqlite: %w", err)
	}
	ranking := &query.Ranking{Window: r.window}
	if err := r.boundTime(ctx, r.q, p); err != nil {
		return query.Page{}, err
	}
	if err := r.tune(ctx, r.q, p, r.window); err != nil {
		return query.Page{}, err
	}
	if p.none {
		return query.Page{Ranking: ranking}, nil
	}
	scanned, err := r.boundCandidates(ctx, p, top)
	if err != nil {
		return query.Page{}, err
	}
	sc, err := r.newScorer(ctx, p)
	if err != nil {
		return query.Page{}, err
	}
	cands, err := r.window1(ctx, p, top, sc)
	if err != nil {
		return query.Page{}, err
	}
	ranking.Ranked = len(cands)
	switch {
	case len(cands) == r.window:
		ranking.Cut = true
	case scanned > 0:
		ranking.Cut, ranking.Scanned = true, scanned
	}
	slices.SortFunc(cands, func(a, b ranked) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	cands = cands[min(start, len(cands)):min(len(cands), start+limit+1)]
	seqs := make([]int64, len(cands))
	for i, c := range cands {
		seqs[i] = c.seq
	}
	bySeq, err := r.docsBySeq(ctx, seqs)
	if err != nil {
		return query.Page{}, err
	}
	docs := make([]*model.IndexDoc, 0, len(cands))
	for _, c := range cands {
		if d := bySeq[c.seq]; d != nil {
			docs = append(docs, d)
		}
	}
	pg := query.Page{Docs: docs, Ranking: ranking}
	if len(cands) > limit {
		pg.Docs = docs[:limit]
		pg.Next = windowCursor(top, start+limit)
	}
	return pg, nil
}

// candidatesPerMatch bounds the walk of a filtered window: at most this
// many documents holding the words per match of the window are tested
// against the filters (each test is an index lookup or a row read, a few
// µs: a filter that passes 1 document in 100 would otherwise walk 200,000).
const candidatesPerMatch = 5

// boundCandidates raises p.seqLo so that a window with filters tests at
// most candidatesPerMatch·r.window documents holding the words, the
// newest at or below top, and returns that bound when it applies (0 when
// fewer documents hold the words, or there is no filter).
func (r *Reader) boundCandidates(ctx context.Context, p *plan, top int64) (int, error) {
	if len(p.probes) == 0 && len(p.rows) == 0 {
		return 0, nil
	}
	c := candidatesPerMatch * r.window
	var (
		n     int
		floor sql.NullInt64
	)
	err := r.q.QueryRowContext(ctx, "SELECT count(*), min(rowid) FROM (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)",
		p.match, p.seqLo, min(top, p.seqHi), c).Scan(&n, &floor)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	if n < c {
		return 0, nil
	}
	p.seqLo = max(p.seqLo, floor.Int64)
	return c, nil
}

// window1 is the newest r.window documents at or below top that match p,
// ranked by sc: the full-text index yields them newest first, so the scan
// stops at the window.
func (r *Reader) window1(ctx context.Context, p *plan, top int64, sc *scorer) ([]ranked, error) {
	f, fargs := p.filter("f.rowid")
	q := "SELECT f.rowid, highlight(docs_fts, 0, char(1), char(2)) FROM docs_fts f" + p.join("f.rowid", false) +
		" WHERE docs_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND " + f + " ORDER BY f.rowid DESC LIMIT ?"
	args := append(append([]any{p.match, p.seqLo, min(top, p.seqHi)}, fargs...), r.window)
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	out := make([]ranked, 0, min(r.window, 256))
	for rows.Next() {
		var (
			c    ranked
			text sql.RawBytes
		)
		if err := rows.Scan(&c.seq, &text); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		c.rank = sc.rank(string(text))
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// newScorer gathers what ranking p's matches takes: the index's
// statistics and each phrase's idf.
func (r *Reader) newScorer(ctx context.Context, p *plan) (*scorer, error) {
	st, err := r.stats(ctx)
	if err != nil {
		return nil, err
	}
	sc := &scorer{st: st}
	for _, ph := range p.phrases {
		v, err := r.idf(ctx, ftsString(ph), st)
		if err != nil {
			return nil, err
		}
		sc.phrases = append(sc.phrases, tokens(ph))
		sc.idf = append(sc.idf, v)
	}
	return sc, nil
}

// docsBySeq reads the documents of seqs, by seq (a document deleted
// meanwhile is missing).
func (r *Reader) docsBySeq(ctx context.Context, seqs []int64) (map[int64]*model.IndexDoc, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(seqs)
	docs, got, _, err := r.docs(ctx, "SELECT d.seq, "+r.db.DocColumns(ctx)+" FROM docs d WHERE d.seq IN (SELECT value FROM json_each(?))", string(list))
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]*model.IndexDoc, len(docs))
	for i, d := range docs {
		bySeq[got[i]] = d
	}
	return bySeq, nil
}

// maxTimeBounded is the most documents in a time range whose seqs
// boundTime finds (a variable for tests): counting them walks the
// timestamp index, about 0.2 µs an entry.
var maxTimeBounded = 100_000

// boundTime bounds the seqs a plan with a time range walks (seqLo,
// seqHi) to those of the documents in the range, when it holds at most
// maxTimeBounded: a newest-first walk of a common word then starts at the
// range instead of testing every newer match's timestamp (a row read
// each). The bounds go into the scan's one range on seq: given a second
// upper bound, the full-text index may pick the wrong one.
func (r *Reader) boundTime(ctx context.Context, q querier, p *plan) error {
	if !p.hasTime || p.none {
		return nil
	}
	if p.tsLo >= p.tsHi {
		p.none = true // an empty range
		return nil
	}
	var (
		n      int
		lo, hi sql.NullInt64
	)
	err := q.QueryRowContext(ctx, "SELECT count(*), min(rowid), max(rowid) FROM (SELECT rowid FROM docs INDEXED BY docs_ts WHERE ts_unix_ms >= ? AND ts_unix_ms < ? LIMIT ?)",
		p.tsLo, p.tsHi, maxTimeBounded+1).Scan(&n, &lo, &hi)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	switch {
	case n == 0:
		p.none = true
	case n > maxTimeBounded:
	case p.drive == fullScan && n <= maxTimeDriven:
		p.drive = p.timeDriver()
	default:
		p.seqLo, p.seqHi = lo.Int64, hi.Int64
	}
	return nil
}
