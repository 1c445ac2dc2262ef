package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"engram/model"
	"engram/query"
	"engram/query/recall"
)

var _ recall.Searcher = (*Reader)(nil)

// Recall finds the candidates of a prompt (see package recall): the
// newest q.Window documents holding any of the prompt's words, each with
// its BM25 (the formula and statistics of Search's window, rank.go), and
// the q.Nearest nearest by embedding (Similar's scan, reranked exactly), both
// filtered by q.Expr, plus q.IDs. Every candidate's cosine to the prompt
// is exact, from its stored embedding. It only reads.
func (r *Reader) Recall(ctx context.Context, q recall.Request) (recall.Answer, error) {
	e, err := parse(q.Expr)
	if err != nil {
		return recall.Answer{}, err
	}
	window := q.Window
	if window <= 0 {
		window = recall.DefaultWindow
	}
	p := newPlan(e, r.now(), r.tenant, true)
	if p.none {
		return recall.Answer{Note: "the filter matches nothing"}, nil
	}
	// The nearest by embedding are looked for meanwhile, on a connection
	// of their own: the two scans take about as long on two cores.
	type found struct {
		seqs []int64
		err  error
	}
	vec := make(chan found, 1)
	k := min(recall.MaxNearest, q.Nearest)
	if k <= 0 {
		k = recall.NearestFor(10)
	}
	if len(q.Vector) > 0 {
		go func() {
			seqs, err := r.recallVector(ctx, q, k)
			vec <- found{seqs, err}
		}()
	}
	words := promptWords(q.Text)
	bm := map[int64]float64{}
	// The text candidates' documents come with their highlights (one
	// read of each row, where reading them afterwards by seq read each
	// row again: a sixth of a recall's CPU time).
	docs := map[int64]*model.IndexDoc{}
	var seqs []int64
	var notes []string
	var sc *scorer
	if len(words) > 0 {
		exprMatch := p.match
		sc, err = r.promptScorer(ctx, words)
		if err != nil {
			return recall.Answer{}, err
		}
		p.match = orMatch(words)
		if exprMatch != "" {
			p.match = "(" + exprMatch + ") AND (" + p.match + ")"
		}
		var full bool
		seqs, full, err = r.recallText(ctx, p, sc, window, bm, docs)
		if err != nil {
			return recall.Answer{}, err
		}
		if full {
			notes = append(notes, fmt.Sprintf("text: the newest %s documents holding a word of the prompt (older ones were not considered)", query.Thousands(int64(len(seqs)))))
		} else {
			notes = append(notes, fmt.Sprintf("text: all %s documents holding a word of the prompt", query.Thousands(int64(len(seqs)))))
		}
	}
	if len(q.Vector) > 0 {
		v := <-vec
		if v.err != nil {
			return recall.Answer{}, v.err
		}
		seqs = append(seqs, v.seqs...)
		notes = append(notes, fmt.Sprintf("similarity: the %d nearest by embedding", k))
	}
	if len(q.IDs) > 0 {
		extra, err := r.recallIDs(ctx, q, sc, bm)
		if err != nil {
			return recall.Answer{}, err
		}
		seqs = append(seqs, extra...)
	}
	seqs = uniq(seqs)
	var unread []int64
	for _, s := range seqs {
		if docs[s] == nil {
			unread = append(unread, s)
		}
	}
	more, err := r.docsBySeq(ctx, unread)
	if err != nil {
		return recall.Answer{}, err
	}
	for s, d := range more {
		docs[s] = d
	}
	ans := recall.Answer{Candidates: make([]recall.Candidate, 0, len(seqs)), Note: strings.Join(notes, "; ")}
	cosines := 0
	for _, s := range seqs {
		d := docs[s]
		if d == nil {
			continue // deleted meanwhile
		}
		c := recall.Candidate{Doc: d, BM25: bm[s]}
		c.Cosine, c.HasCosine = recall.Cosine(q.Vector, d.Embedding)
		if c.HasCosine {
			cosines++
		}
		ans.Candidates = append(ans.Candidates, c)
	}
	if len(q.Vector) > 0 && cosines == 0 && len(ans.Candidates) > 0 {
		ans.Note += fmt.Sprintf("; no candidate has an embedding of the prompt's %d components: --embedder (and --embed-dim) choose the embedder that wrote the index's", len(q.Vector))
	}
	return ans, nil
}

// promptWords is the prompt's tokens, each once, in order.
func promptWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range tokens(text) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// orMatch is the FTS5 query of any of words.
func orMatch(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ftsString(w)
	}
	return strings.Join(q, " OR ")
}

// promptScorer ranks texts by BM25 of the prompt's words, each a phrase.
func (r *Reader) promptScorer(ctx context.Context, words []string) (*scorer, error) {
	st, err := r.stats(ctx)
	if err != nil {
		return nil, err
	}
	sc := &scorer{st: st}
	for _, w := range words {
		v, err := r.idf(ctx, ftsString(w), st)
		if err != nil {
			return nil, err
		}
		sc.phrases = append(sc.phrases, []string{w})
		sc.idf = append(sc.idf, v)
	}
	return sc, nil
}

// recallText reads the newest window documents matching p into docs and
// their BM25 into bm: their seqs, newest first, and whether the window
// was full.
func (r *Reader) recallText(ctx context.Context, p *plan, sc *scorer, window int, bm map[int64]float64, docs map[int64]*model.IndexDoc) ([]int64, bool, error) {
	top := sc.st.maxSeq
	if err := r.boundTime(ctx, r.q, p); err != nil {
		return nil, false, err
	}
	if p.none {
		return nil, false, nil
	}
	if err := r.tune(ctx, r.q, p, window); err != nil {
		return nil, false, err
	}
	scanned, err := r.boundWalk(ctx, p, top, window)
	if err != nil {
		return nil, false, err
	}
	f, fargs := p.filter("f.rowid")
	// CROSS JOIN keeps the full-text index the outer loop, walked newest
	// first; the row conditions of p read d.
	qs := "SELECT f.rowid, highlight(docs_fts, 0, char(1), char(2)), " + r.db.DocColumns(ctx) +
		" FROM docs_fts f CROSS JOIN docs d ON d.seq = f.rowid" +
		" WHERE docs_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND " + f + " ORDER BY f.rowid DESC LIMIT ?"
	args := append(append([]any{p.match, p.seqLo, min(top, p.seqHi)}, fargs...), window)
	seqs, err := r.scoreDocs(ctx, qs, args, sc, bm, docs)
	if err != nil {
		return nil, false, err
	}
	return seqs, len(seqs) == window || scanned > 0, nil
}

// scoreDocs runs qs (columns seq, highlighted summary, the document
// columns) and puts each row's BM25 (positive, higher better) into bm and
// its document into docs: the seqs in the order of the rows.
func (r *Reader) scoreDocs(ctx context.Context, qs string, args []any, sc *scorer, bm map[int64]float64, docs map[int64]*model.IndexDoc) ([]int64, error) {
	rows, err := r.q.QueryContext(ctx, qs, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var (
		seqs []int64
		seq  int64
		text sql.RawBytes
		row  docRow
	)
	// One row's destinations serve every row, as in Reader.docs.
	dest := append([]any{&seq, &text}, row.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		d, err := decodeDoc(&row)
		if err != nil {
			return nil, err
		}
		bm[seq] = -sc.rank(string(text))
		docs[seq] = d
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return seqs, nil
}

// boundWalk is boundCandidates for a window of window matches.
func (r *Reader) boundWalk(ctx context.Context, p *plan, top int64, window int) (int, error) {
	if len(p.probes) == 0 && len(p.rows) == 0 {
		return 0, nil
	}
	c := candidatesPerMatch * window
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

// scoreRows runs qs (columns seq, highlighted summary) and puts each
// row's BM25 (positive, higher better) into bm.
func scoreRows(ctx context.Context, q *sql.DB, qs string, args []any, sc *scorer, bm map[int64]float64) (int, error) {
	rows, err := q.QueryContext(ctx, qs, args...)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			seq  int64
			text sql.RawBytes
		)
		if err := rows.Scan(&seq, &text); err != nil {
			return 0, fmt.Errorf("sqlite: %w", err)
		}
		bm[seq] = -sc.rank(string(text))
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return n, nil
}

// recallVector is the seqs of the k documents nearest to q.Vector that
// match q.Expr.
func (r *Reader) recallVector(ctx context.Context, q recall.Request, k int) ([]int64, error) {
	fast, err := r.hasVectors(ctx)
	if err != nil {
		return nil, err
	}
	best, err := r.nearestIn(ctx, 0, len(q.Vector), q.Vector, k, fast, SimilarFilter{})
	if err != nil {
		return nil, err
	}
	seqs := make([]int64, len(best))
	for i, c := range best {
		seqs[i] = c.seq
	}
	return r.matchSeqs(ctx, q.Expr, seqs)
}

// matchSeqs is those of seqs whose documents match expr.
func (r *Reader) matchSeqs(ctx context.Context, src string, seqs []int64) ([]int64, error) {
	if strings.TrimSpace(src) == "" || len(seqs) == 0 {
		return seqs, nil
	}
	e, err := parse(src)
	if err != nil {
		return nil, err
	}
	p := newPlan(e, r.now(), r.tenant, false)
	if p.none {
		return nil, nil
	}
	f, fargs := p.filterAll("d.seq")
	if p.match != "" {
		f += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		fargs = append(fargs, p.match)
	}
	list, _ := json.Marshal(seqs)
	rows, err := r.q.QueryContext(ctx, "SELECT d.seq FROM docs d WHERE d.seq IN (SELECT value FROM json_each(?)) AND "+f,
		append([]any{string(list)}, fargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// recallIDs is the seqs of q.IDs that match q.Expr (and the reader's
// tenant), their BM25 put into bm when sc is set.
func (r *Reader) recallIDs(ctx context.Context, q recall.Request, sc *scorer, bm map[int64]float64) ([]int64, error) {
	w, wargs := r.tenantWhere()
	list, _ := json.Marshal(q.IDs)
	rows, err := r.q.QueryContext(ctx, "SELECT d.seq FROM docs d WHERE d.event_id IN (SELECT value FROM json_each(?)) AND "+w,
		append([]any{string(list)}, wargs...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	var seqs []int64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		seqs = append(seqs, s)
	}
	_ = rows.Close()
	if seqs, err = r.matchSeqs(ctx, q.Expr, seqs); err != nil || sc == nil || len(seqs) == 0 {
		return seqs, err
	}
	sl, _ := json.Marshal(seqs)
	_, err = scoreRows(ctx, r.q, "SELECT rowid, highlight(docs_fts, 0, char(1), char(2)) FROM docs_fts WHERE docs_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))",
		[]any{orMatch(promptWords(q.Text)), string(sl)}, sc, bm)
	return seqs, err
}

func uniq(seqs []int64) []int64 {
	seen := make(map[int64]bool, len(seqs))
	out := seqs[:0]
	for _, s := range seqs {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
