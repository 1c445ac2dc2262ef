package osindex

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/recall"
)

// unitSlack is how far from 1 the length of a target's embedding may be
// for Similar to take it as normalized: float32 storage and the models'
// own rounding leave some 1e-7; a vector not meant to be unit is off by far
// more.
const unitSlack = 1e-3

// similarCandidates, when above 0, replaces candidatesFor's count (for
// the benchmark's sweep).
var similarCandidates int

// candidatesFor is how many candidates (ef_search) Similar's k-NN query asks
// for at dim dimensions, at least k: the smallest of 100-800 reaching
// recall@10 0.95 on 100,000 hashed embeddings (400 at 768 dimensions, 800 at
// 1536; BENCHMARKS.md).
func candidatesFor(dim int) int {
	if similarCandidates > 0 {
		return similarCandidates
	}
	if dim > 1024 {
		return 800
	}
	return 400
}

// Similar is the k documents nearest to eventID's embedding by cosine
// similarity (the Score, in [-1, 1]), the document itself left out; one
// without an embedding of the index's dimension has none. It is a k-NN query
// on the HNSW graph where the graph ranks as the cosine does, else an exact
// script scan (docs/opensearch.md, Similarity). Without the k-NN plugin or a
// knn_vector mapping the error wraps backend.ErrUnavailable.
func (r *Reader) Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error) {
	return r.similar(ctx, eventID, k, false)
}

// similar is Similar; exact forces the script scan (for measuring the
// graph's answers against it).
func (r *Reader) similar(ctx context.Context, eventID string, k int, exact bool) ([]query.Scored, error) {
	if !r.knn {
		return nil, fmt.Errorf("%s: similarity search needs the k-NN plugin on the cluster: %w", r.where, backend.ErrUnavailable)
	}
	if !r.vector {
		return nil, fmt.Errorf("%s: similarity search needs an index whose embedding is a knn_vector (reindex it): %w", r.where, backend.ErrUnavailable)
	}
	if k <= 0 {
		k = defaultK
	}
	k = min(k, maxWindow)
	target, err := r.Document(ctx, eventID)
	if err != nil {
		return nil, err
	}
	v := target.Embedding
	n := norm(v)
	if len(v) == 0 || len(v) != r.dim || n == 0 {
		return []query.Scored{}, nil
	}
	filter := append(tenantQuery(r.tenant), exists(fEmbedding))
	notSelf := []any{ids([]string{target.EventID})}
	graph := !exact && (r.space == "cosinesimil" ||
		((r.space == "l2" || r.space == "innerproduct") && math.Abs(n-1) <= unitSlack))
	var q obj
	if graph {
		q = obj{"knn": obj{fEmbedding: obj{
			"vector": v,
			"k":      min(max(k, candidatesFor(r.dim)), maxWindow),
			"filter": obj{"bool": obj{"filter": filter, "must_not": notSelf}},
		}}}
	} else {
		q = obj{"script_score": obj{
			"query": obj{"bool": obj{"filter": filter, "must_not": notSelf}},
			"script": obj{"source": "knn_score", "lang": "knn", "params": obj{
				"field": fEmbedding, "query_value": v, "space_type": "cosinesimil",
			}},
		}}
	}
	op := "similar to " + model.Quote(eventID)
	res, err := r.search(ctx, op, obj{"size": k, "query": q, "track_total_hits": false,
		"sort": []any{obj{"_score": "desc"}, obj{fEventID: "asc"}}})
	if err != nil {
		return nil, err
	}
	// The plugin's score is the cosine's only in space cosinesimil (the
	// script's and that graph's); the l2 and innerproduct graphs score by
	// their own measure, computed on float32s, so the cosine is taken from
	// the hit's embedding, which the answer carries anyway (from the score
	// when a _source leaves the embedding out).
	fromEmbedding := graph && r.space != "cosinesimil"
	out := make([]query.Scored, 0, len(res.Hits.Hits))
	for i := range res.Hits.Hits {
		h := &res.Hits.Hits[i]
		d, err := r.decodeDoc(op, h)
		if err != nil {
			return nil, err
		}
		if d.EventID == target.EventID {
			continue
		}
		if fromEmbedding {
			if c, ok := recall.Cosine(v, d.Embedding); ok {
				out = append(out, query.Scored{Doc: d, Score: c})
				continue
			}
		}
		if len(h.Sort) < 1 {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		score, err := strconv.ParseFloat(strings.TrimSpace(string(h.Sort[0])), 64)
		if err != nil {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		space := "cosinesimil" // the script's
		if graph {
			space = r.space
		}
		out = append(out, query.Scored{Doc: d, Score: cosOfScore(space, score)})
	}
	if fromEmbedding {
		// float32 distances may order near-ties otherwise than the cosines.
		slices.SortStableFunc(out, func(a, b query.Scored) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Doc.EventID, b.Doc.EventID))
		})
	}
	return out, nil
}

// cosOfScore turns the k-NN plugin's score in space back into the cosine,
// for unit vectors in l2 and innerproduct: cosinesimil scores (1 + cos) / 2,
// l2 1 / (1 + d²) with d² = 2 - 2cos, innerproduct 1 + ip when ip >= 0 and
// 1 / (1 - ip) below.
func cosOfScore(space string, s float64) float64 {
	var c float64
	switch {
	case s <= 0:
		return -1
	case space == "l2":
		c = 1 - (1/s-1)/2
	case space == "innerproduct" && s >= 1:
		c = s - 1
	case space == "innerproduct":
		c = 1 - 1/s
	default:
		c = 2*s - 1
	}
	return math.Max(-1, math.Min(1, c))
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
