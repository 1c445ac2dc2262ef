package osindex

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"engram/backend"
	"engram/model"
	"engram/query"
)

// Similar is the k documents nearest to eventID's embedding by cosine
// similarity (the Score, in [-1, 1]); the document itself is left out. A
// document without an embedding (or of another dimension than the index's)
// has no neighbours. It needs the k-NN plugin and an index that maps
// embedding as a knn_vector; otherwise the error wraps backend.ErrUnavailable.
//
// When the knn_vector's space is cosinesimil this is an approximate k-NN
// query (HNSW); in any other space (l2, the source system's and engram's
// default, or innerproduct) the nearest by l2 are not the nearest by
// cosine unless every vector has the same length, so it scores the
// matching documents exactly with the k-NN plugin's knn_score script in
// space cosinesimil, a scan whose cost grows with the index. Both give the
// plugin's cosine score (1 + cos) / 2, turned back into cos.
func (r *Reader) Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error) {
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
	if len(v) == 0 || len(v) != r.dim || norm(v) == 0 {
		return []query.Scored{}, nil
	}
	filter := append(tenantQuery(r.tenant), exists(fEmbedding))
	notSelf := []any{ids([]string{target.EventID})}
	var q obj
	if r.space == "cosinesimil" {
		q = obj{"knn": obj{fEmbedding: obj{
			"vector": v,
			"k":      k,
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
		if len(h.Sort) < 1 {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		score, err := strconv.ParseFloat(strings.TrimSpace(string(h.Sort[0])), 64)
		if err != nil {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		out = append(out, query.Scored{Doc: d, Score: math.Max(-1, math.Min(1, 2*score-1))})
	}
	return out, nil
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
