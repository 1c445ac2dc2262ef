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

	"engram/backend"
	"engram/model"
	"engram/query"
)

// Similar is the k documents nearest to eventID's embedding by cosine
// similarity (the Score) among the embeddings of the same dimension; the
// document itself is left out. A document without an embedding has no
// neighbours. The scores are exact; which documents are found is
// approximate (see nearestTo): recall@10 against the exact scan is
// measured in BenchmarkSimilar and TestSimilarRecall.
func (r *Reader) Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error) {
	if k <= 0 {
		k = DefaultK
	}
	k = min(k, MaxLimit)
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
	best, err := r.nearestTo(ctx, seq, dim, target, k, fast)
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

// nearestTo is the k best candidates to target (the embedding of seq, of
// dimension dim), best first. fast: from the quantized vec_blocks, the
// best rerankFactor*k reranked exactly from docs (which drops a seq no
// longer there or no longer of the tenant, and scores a changed embedding
// as it is now), with the seqs of vec_dirty; otherwise by an exact scan of docs (an index older than
// vec_blocks).
func (r *Reader) nearestTo(ctx context.Context, seq int64, dim int, target []float64, k int, fast bool) ([]candidate, error) {
	w, wargs := r.tenantWhere()
	q, args := "SELECT d.seq, d.embedding FROM docs d WHERE d.embedding_dim = ? AND d.seq != ? AND "+w,
		append([]any{dim, seq}, wargs...)
	if fast {
		cands, err := r.approxNearest(ctx, dim, target, seq, max(rerankFactor*k, minCandidates))
		if err != nil || len(cands) == 0 {
			return nil, err
		}
		list, _ := json.Marshal(cands)
		q, args = `SELECT d.seq, d.embedding FROM docs d
  WHERE d.seq IN (SELECT value FROM json_each(?) UNION ALL SELECT seq FROM vec_dirty) AND d.seq != ? AND d.embedding_dim = ? AND `+w,
			append([]any{string(list), seq, dim}, wargs...)
	}
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	return rank(rows, dim, target, k)
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
