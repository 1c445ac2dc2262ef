package sqliteindex

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
)

// rerankFactor: Similar takes rerankFactor*k candidates (at least
// minCandidates) from the quantized scan and reranks them exactly. Each is
// a random read of a docs page, from disk when the index is larger than
// what the OS caches: at 1M documents 30 kept recall@10 at 1.000 and cut
// the real binary's p99 from 102 to 80 ms (interleaved, load 12) against 100.
const (
	rerankFactor  = 3
	minCandidates = 30
)

// hasVectors reports whether the index has vec_blocks (schema version 5 on;
// an older index read before a writer upgraded it has not).
func (r *Reader) hasVectors(ctx context.Context) (bool, error) {
	var v int
	if err := r.q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("sqlite: %w", err)
	}
	return v >= vecsVersion, nil
}

// approxNearest is the n best seqs by the int8 cosine to target over the
// vec_blocks of dim (of the reader's tenant when it has one), seq itself
// left out, best first. One scan: splitting the blocks across two read
// connections, one per CPU, cost 15-25% more CPU time and did not shorten
// the wall-clock time measurably on the shared 2-core machine.
func (r *Reader) approxNearest(ctx context.Context, dim int, target []float64, seq int64, n int) ([]int64, error) {
	q, args := "SELECT block, seqs, vecs FROM vec_blocks WHERE dim = ?", []any{dim}
	if r.tenant != "" {
		q, args = q+" AND tenant = ?", append(args, r.tenant)
	}
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	t := make([]float32, dim)
	for i, x := range target {
		t[i] = float32(x)
	}
	h := make(nearest, 0, n)
	shift := blockShift(dim)
	stride := 4 + dim
	for rows.Next() {
		var block int64
		var seqs, vecs sql.RawBytes
		if err := rows.Scan(&block, &seqs, &vecs); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		if len(seqs)%2 != 0 || len(vecs) != len(seqs)/2*stride {
			return nil, fmt.Errorf("sqlite: vec_blocks row (dim %d, block %d) is damaged: %d bytes of seqs, %d of vectors",
				dim, block, len(seqs), len(vecs))
		}
		base := block << shift
		for i := range len(seqs) / 2 {
			s := base + int64(binary.LittleEndian.Uint16(seqs[2*i:]))
			v := vecs[i*stride : (i+1)*stride]
			if s != seq {
				h.offer(candidate{s, float64(dot8(v[4:], t) * math.Float32frombits(binary.LittleEndian.Uint32(v)))}, n)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	out := make([]int64, len(h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(candidate).seq
	}
	return out, nil
}

// dot8 is the dot product of int8 components q and t (len(t) >= len(q)),
// four independent sums at a time (a long vector is bound by the latency of
// one chain of additions otherwise).
func dot8(q []byte, t []float32) float32 {
	t = t[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		q4, t4 := q[i:i+4:i+4], t[i:i+4:i+4]
		s0 += float32(int8(q4[0])) * t4[0]
		s1 += float32(int8(q4[1])) * t4[1]
		s2 += float32(int8(q4[2])) * t4[2]
		s3 += float32(int8(q4[3])) * t4[3]
	}
	for ; i < len(q); i++ {
		s0 += float32(int8(q[i])) * t[i]
	}
	return (s0 + s1) + (s2 + s3)
}
