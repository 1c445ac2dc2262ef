package sqliteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ranking a window of matches by BM25 without FTS5's bm25(), which first
// walks the whole index for each phrase's document count (most of a search
// for a common word): the same formula (k1 = 1.2, b = 0.75, FTS5's idf)
// with each phrase's count estimated from the newest dfSample seqs, the
// totals from FTS5's averages record, and each document's instances from
// highlight(), counted for the query phrase each is closest to.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// Around each highlighted phrase instance.
	markOpen, markClose = '\x01', '\x02'
)

// dfSample is how many of the newest seqs estimate a phrase's document
// count (a variable for tests).
var dfSample = 20000

// ftsStats is the index's document count, mean document length and
// newest seq.
type ftsStats struct {
	docs   float64
	avgdl  float64
	maxSeq int64
}

// stats reads FTS5's averages record (row 1 of docs_fts_data): a varint
// of the rows indexed, then one of the tokens in each column.
func (r *Reader) stats(ctx context.Context) (ftsStats, error) {
	var rec []byte
	err := r.q.QueryRowContext(ctx, "SELECT block FROM docs_fts_data WHERE id = 1").Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return ftsStats{}, nil
	}
	if err != nil {
		return ftsStats{}, fmt.Errorf("sqlite: %w", err)
	}
	rows, n := varint(rec)
	tokens, m := varint(rec[n:])
	if n == 0 || m == 0 || rows == 0 {
		return ftsStats{}, nil
	}
	st := ftsStats{docs: float64(rows), avgdl: float64(tokens) / float64(rows)}
	if err := r.q.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM docs").Scan(&st.maxSeq); err != nil {
		return ftsStats{}, fmt.Errorf("sqlite: %w", err)
	}
	return st, nil
}

// varint reads an SQLite varint (big-endian groups of 7 bits, the ninth
// byte whole) and its length, 0 when b is too short.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// idf is FTS5's inverse document frequency of an FTS5 phrase string,
// its document count counted among the newest dfSample seqs and scaled to
// the index (exact when the index has no more); a phrase absent from them
// counts as in one document.
func (r *Reader) idf(ctx context.Context, phrase string, st ftsStats) (float64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ? AND rowid > ?",
		phrase, st.maxSeq-int64(dfSample)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	df := float64(n)
	if st.maxSeq > int64(dfSample) {
		df = math.Min(st.docs, math.Max(1, df*float64(st.maxSeq)/float64(dfSample)))
	}
	v := math.Log((st.docs - df + 0.5) / (df + 0.5))
	if v <= 0 {
		v = 1e-6 // as FTS5: a phrase in most documents still counts a little
	}
	return v, nil
}

// scorer ranks highlighted texts for one query.
type scorer struct {
	phrases [][]string // each query phrase's tokens, lower case
	idf     []float64
	st      ftsStats
}

// rank is the BM25 rank of a highlighted text: negative, lower is better,
// like FTS5's bm25().
func (s *scorer) rank(text string) float64 {
	tf := make([]float64, len(s.phrases))
	dl := 0
	var inst []string
	in := false
	for len(text) > 0 {
		c, size := utf8.DecodeRuneInString(text)
		switch {
		case c == markOpen:
			in, inst = true, inst[:0]
		case c == markClose:
			in = false
			if len(s.phrases) > 0 {
				tf[s.closest(inst)]++
			}
		case isTokenRune(c):
			end := size
			for end < len(text) {
				d, n := utf8.DecodeRuneInString(text[end:])
				if !isTokenRune(d) {
					break
				}
				end += n
			}
			dl++
			if in {
				inst = append(inst, strings.ToLower(text[:end]))
			}
			size = end
		}
		text = text[size:]
	}
	var score float64
	norm := bm25K1 * (1 - bm25B + bm25B*float64(dl)/math.Max(s.st.avgdl, 1))
	for i, f := range tf {
		score += s.idf[i] * f * (bm25K1 + 1) / (f + norm)
	}
	return -score
}

// closest is the query phrase an instance's tokens are most like: the
// most tokens sharing their longest common prefix, over the phrase's
// length.
func (s *scorer) closest(inst []string) int {
	best, bestScore := 0, -1.0
	for i, p := range s.phrases {
		var shared float64
		for k := 0; k < len(p) && k < len(inst); k++ {
			shared += float64(commonPrefix(p[k], inst[k])) / float64(max(len(p[k]), 1))
		}
		if v := shared / float64(max(len(p), len(inst))); v > bestScore {
			best, bestScore = i, v
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// isTokenRune reports whether unicode61 makes c part of a token.
func isTokenRune(c rune) bool {
	return unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.Is(unicode.Co, c)
}

// tokens is s split as unicode61 splits it, lower case.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !isTokenRune(c) })
}
