package sqliteindex

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
)

// Similar is the k documents nearest to eventID's embedding by cosine
// similarity (the Score) among the embeddings of the same dimension; the
// document itself is left out. A document without an embedding has no
// neighbours. The scores are exact; which documents are found is
// approximate (see nearestIn): recall@10 against the exact scan is
// measured in BenchmarkSimilar, BenchmarkSimilarLarge and
// TestSimilarRecall.
func (r *Reader) Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error) {
	return r.SimilarIn(ctx, eventID, k, SimilarFilter{})
}

// SimilarFilter narrows the neighbours Similar looks among (beside the
// reader's tenant): the zero value takes every document.
type SimilarFilter struct {
	Types    []string  // event types, any of them; all when empty
	From, To time.Time // timestamp in [From, To); unbounded where zero
}

func (f SimilarFilter) zero() bool { return len(f.Types) == 0 && f.From.IsZero() && f.To.IsZero() }

// where is f as a condition on docs d, and its arguments.
func (f SimilarFilter) where() (string, []any) {
	w, args := "1", []any{}
	if len(f.Types) > 0 {
		list, _ := json.Marshal(f.Types)
		w, args = w+" AND d.event_type IN (SELECT value FROM json_each(?))", append(args, string(list))
	}
	if !f.From.IsZero() {
		w, args = w+" AND d.ts_unix_ms >= ?", append(args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		w, args = w+" AND d.ts_unix_ms < ?", append(args, f.To.UnixMilli())
	}
	return w, args
}

// SimilarIn is Similar among the documents f lets through, applied
// exactly: the k nearest of those, not the nearest k filtered.
func (r *Reader) SimilarIn(ctx context.Context, eventID string, k int, f SimilarFilter) ([]query.Scored, error) {
	if k <= 0 {
		k = defaultK
	}
	k = min(k, maxLimit)
	seq, dim, target, err := r.embeddingOf(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if target == nil {
		return []query.Scored{}, nil
	}
	fast, err := r.hasVectors(ctx)
	if err != nil {
		return nil, err
	}
	best, err := r.nearestIn(ctx, seq, dim, target, k, fast, f)
	if err != nil {
		return nil, err
	}
	if len(best) == 0 {
		return []query.Scored{}, nil
	}
	seqs := make([]int64, len(best))
	for i, c := range best {
		seqs[i] = c.seq
	}
	bySeq, err := r.docsBySeq(ctx, seqs)
	if err != nil {
		return nil, err
	}
	out := make([]query.Scored, 0, len(best))
	for _, c := range best {
		if d := bySeq[c.seq]; d != nil {
			out = append(out, query.Scored{Doc: d, Score: c.score})
		}
	}
	return out, nil
}

// nearestTo is nearestIn without a filter.
func (r *Reader) nearestTo(ctx context.Context, seq int64, dim int, target []float64, k int, fast bool) ([]candidate, error) {
	return r.nearestIn(ctx, seq, dim, target, k, fast, SimilarFilter{})
}

// bitsCandidates is how many candidates the sign-bit scan passes to the
// exact ranking, for k up to bitsCandidates/bitsFactor; more for a larger
// k (a variable for the benchmarks).
var (
	bitsCandidates = 100
	bitsFactor     = 10
)

// nearestIn is the k best candidates to target (the embedding of seq, of
// dimension dim) among the tenant's documents f lets through, best first.
// With fast they come from the sign-bit file at bitsMinDim dimensions and
// more, else from vec_blocks (which knows no types or times: a filter with
// either is an exact scan), reranked exactly from docs; without, from an
// exact scan of docs. The seqs of vec_dirty are always ranked.
func (r *Reader) nearestIn(ctx context.Context, seq int64, dim int, target []float64, k int, fast bool, f SimilarFilter) ([]candidate, error) {
	w, wargs := r.tenantWhere()
	fw, fargs := f.where()
	w, wargs = w+" AND "+fw, append(wargs, fargs...)
	exact := func(cond string, args ...any) ([]candidate, error) {
		rows, err := r.q.QueryContext(ctx, "SELECT d.seq, d.embedding FROM docs d WHERE "+cond+
			" AND d.embedding_dim = ? AND d.seq != ? AND "+w, append(append(args, dim, seq), wargs...)...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		defer rows.Close()
		return rank(rows, dim, target, k)
	}
	candidates := func(cands []int64) ([]candidate, error) {
		list, _ := json.Marshal(cands)
		return exact("d.seq IN (SELECT value FROM json_each(?) UNION ALL SELECT seq FROM vec_dirty)", string(list))
	}
	if !fast {
		return exact("1")
	}
	bf, err := r.openBits(ctx, dim)
	if err != nil {
		return nil, err
	}
	if bf != nil {
		defer bf.close()
		cands := bf.nearest(target, r.bitsFilter(f, seq), max(bitsCandidates, bitsFactor*k))
		found, err := candidates(cands)
		if err != nil {
			return nil, err
		}
		newer, err := exact("d.seq > ?", bf.last)
		if err != nil {
			return nil, err
		}
		return merge(found, newer, k), nil
	}
	if dim >= bitsMinDim {
		// Since version 8 vec_blocks holds no vectors of this size: the
		// sign-bit file is their compact copy, and without it (deleted,
		// until a writer's open rebuilds it) the scan is exact.
		if v, err := r.version(ctx); err != nil || v >= 8 {
			if err != nil {
				return nil, err
			}
			return exact("1")
		}
	}
	if !f.zero() {
		return exact("1")
	}
	cands, err := r.approxNearest(ctx, dim, target, seq, max(rerankFactor*k, minCandidates))
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return candidates(cands)
}

// openBits maps the sign-bit file of dim when the index has one that is
// its own (schema version 8 on); nil otherwise.
func (r *Reader) openBits(ctx context.Context, dim int) (*bitsFile, error) {
	if dim < bitsMinDim {
		return nil, nil
	}
	v, err := r.version(ctx)
	if err != nil || v < 8 {
		return nil, err
	}
	id, err := vecID(ctx, r.q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	abs, err := filepath.Abs(r.path)
	if err != nil {
		return nil, err
	}
	return openBits(abs, dim, id)
}

// version is the index's schema version.
func (r *Reader) version(ctx context.Context) (int, error) {
	var v int
	if err := r.q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return v, nil
}

// bitsFilter is the reader's tenant and f for the sign-bit scan, seq left
// out.
func (r *Reader) bitsFilter(f SimilarFilter, seq int64) *bitsFilter {
	bf := &bitsFilter{exclude: seq, from: math.MinInt64, to: math.MaxInt64}
	if r.tenant != "" {
		bf.tenant, bf.hasTenant = fnv64a(r.tenant), true
	}
	for _, t := range f.Types {
		bf.types = append(bf.types, fnv64a(t))
	}
	if !f.From.IsZero() {
		bf.from, bf.hasTime = f.From.UnixMilli(), true
	}
	if !f.To.IsZero() {
		bf.to, bf.hasTime = f.To.UnixMilli(), true
	}
	return bf
}

// merge is the k best of two lists of candidates, each best first (a seq
// in both once).
func merge(a, b []candidate, k int) []candidate {
	all := append(append([]candidate{}, a...), b...)
	slices.SortFunc(all, func(x, y candidate) int {
		if x.better(y) {
			return -1
		}
		if y.better(x) {
			return 1
		}
		return 0
	})
	all = slices.CompactFunc(all, func(x, y candidate) bool { return x.seq == y.seq })
	return all[:min(k, len(all))]
}

// Embedder names the embedder that wrote the index's vectors of dim
// components, as its writer recorded it ("stub", "hashed", "http MODEL"),
// or "" when none did (an index written before schema version 8, or by a
// writer not told).
func (r *Reader) Embedder(ctx context.Context, dim int) (string, error) {
	var v int
	if err := r.q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	if v < 8 {
		return "", nil
	}
	var name string
	err := r.q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", fmt.Sprintf("embedder %d", dim)).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return name, nil
}

// stubNote is what a list of similar events says when the stub embedder
// wrote their vectors.
const stubNote = "stub embedder: scores are not semantic"

// ScoresNote is one line to show beside similarity scores between
// vectors of dim components: stubNote when the stub embedder wrote them,
// else "".
func (r *Reader) ScoresNote(ctx context.Context, dim int) string {
	if name, err := r.Embedder(ctx, dim); err == nil && name == "stub" {
		return stubNote
	}
	return ""
}

// rank is the k rows of (seq, float32 embedding) nearest to target by
// cosine, best first.
func rank(rows *sql.Rows, dim int, target []float64, k int) ([]candidate, error) {
	tnorm := norm(target)
	h := &nearest{}
	v := make([]float64, dim)
	for rows.Next() {
		var s int64
		var b sql.RawBytes
		if err := rows.Scan(&s, &b); err != nil {
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
		h.offer(c, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	best := make([]candidate, h.Len())
	for i := len(best) - 1; i >= 0; i-- {
		best[i] = heap.Pop(h).(candidate)
	}
	return best, nil
}

// embeddingOf is the seq, dimension and embedding of eventID (visible to
// the reader's tenant); a nil embedding when it has none or a zero one.
func (r *Reader) embeddingOf(ctx context.Context, eventID string) (int64, int, []float64, error) {
	w, wargs := r.tenantWhere()
	var (
		seq  int64
		blob []byte
		dim  int
	)
	err := r.q.QueryRowContext(ctx, "SELECT d.seq, d.embedding, d.embedding_dim FROM docs d WHERE d.event_id = ? AND "+w,
		append([]any{eventID}, wargs...)...).Scan(&seq, &blob, &dim)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil, fmt.Errorf("event %s: %w", model.Quote(eventID), backend.ErrNotFound)
	}
	if err != nil {
		return 0, 0, nil, fmt.Errorf("sqlite: %w", err)
	}
	if dim == 0 || len(blob) != 4*dim {
		return seq, dim, nil, nil
	}
	target := vector(blob, nil)
	if norm(target) == 0 {
		return seq, dim, nil, nil
	}
	return seq, dim, target, nil
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

// offer keeps c when it is among the n best seen.
func (h *nearest) offer(c candidate, n int) {
	if len(*h) < n {
		heap.Push(h, c)
	} else if c.better((*h)[0]) {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
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
