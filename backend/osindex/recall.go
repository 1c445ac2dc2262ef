package osindex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"engram/model"
	"engram/query"
	"engram/query/recall"
)

var _ recall.Searcher = (*Reader)(nil)

// recallHit is a hit with its score and the scores of its named queries
// (include_named_queries_score: an object of name → score; a list of names
// on a server without it).
type recallHit struct {
	ID      string          `json:"_id"`
	Score   float64         `json:"_score"`
	Source  json.RawMessage `json:"_source"`
	Matched json.RawMessage `json:"matched_queries"`
}

type recallResult struct {
	result
	Hits struct {
		Hits []recallHit `json:"hits"`
	} `json:"hits"`
}

// Recall finds the candidates of a prompt in one hybrid request, a text
// match on summary (its BM25 per hit) or a knn clause of the prompt's
// embedding, filtered by q.Expr and the tenant; the best q.Window hits are
// the candidates, their factors recomputed from the hits. q.IDs not among
// them are fetched by a second request to score them alike. It only reads.
func (r *Reader) Recall(ctx context.Context, q recall.Request) (recall.Answer, error) {
	e, err := parse(q.Expr)
	if err != nil {
		return recall.Answer{}, err
	}
	window := q.Window
	if window <= 0 {
		window = recall.DefaultWindow
	}
	window = min(window, maxWindow)
	filter := translate(e, r.now(), r.tenant, false)
	var should []any
	text := strings.TrimSpace(q.Text)
	if text != "" {
		should = append(should, obj{"match": obj{fSummary: obj{"query": text, "_name": "text"}}})
	}
	var notes []string
	knn := r.knn && r.vector && len(q.Vector) > 0 && len(q.Vector) == r.dim
	if knn {
		k := q.Nearest
		if k <= 0 {
			k = recall.NearestFor(10)
		}
		k = min(k, recall.MaxNearest)
		should = append(should, obj{"knn": obj{fEmbedding: obj{"vector": q.Vector, "k": k}}})
		notes = append(notes, fmt.Sprintf("one hybrid request: the best %s hits of a match on summary or the %d nearest by embedding (k-NN)", query.Thousands(int64(window)), k))
	} else {
		notes = append(notes, fmt.Sprintf("the best %s hits of a match on summary (no k-NN for this prompt: similarity recomputed for them only)", query.Thousands(int64(window))))
		if r.vector && len(q.Vector) > 0 {
			notes = append(notes, fmt.Sprintf("the prompt's embedding has %d components, the index's %d: --embedder (and --embed-dim) choose the embedder that wrote them", len(q.Vector), r.dim))
		}
	}
	if len(should) == 0 {
		return recall.Answer{Note: "an empty prompt"}, nil
	}
	op := "recall"
	hits, err := r.recallSearch(ctx, op, obj{"size": window, "track_total_hits": false,
		"query": obj{"bool": obj{"filter": []any{filter}, "should": should, "minimum_should_match": 1}}})
	if err != nil {
		return recall.Answer{}, err
	}
	ans := recall.Answer{Note: strings.Join(notes, "; ")}
	seen := map[string]bool{}
	for i := range hits {
		c, err := r.recallCandidate(op, &hits[i], q.Vector)
		if err != nil {
			return recall.Answer{}, err
		}
		seen[c.Doc.EventID] = true
		ans.Candidates = append(ans.Candidates, c)
	}
	var missing []string
	for _, id := range q.IDs {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		b := obj{"bool": obj{"filter": []any{filter, ids(missing)}}}
		if text != "" {
			b["bool"].(obj)["should"] = []any{should[0]}
		}
		hits, err := r.recallSearch(ctx, op, obj{"size": len(missing), "query": b})
		if err != nil {
			return recall.Answer{}, err
		}
		for i := range hits {
			c, err := r.recallCandidate(op, &hits[i], q.Vector)
			if err != nil {
				return recall.Answer{}, err
			}
			ans.Candidates = append(ans.Candidates, c)
		}
	}
	return ans, nil
}

// recallSearch runs body with the named queries' scores.
func (r *Reader) recallSearch(ctx context.Context, op string, body obj) ([]recallHit, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, r.fail(op, err)
	}
	req := request{path: "/" + url.PathEscape(r.index) + "/_search",
		query: url.Values{"include_named_queries_score": {"true"}}, body: b}
	var res recallResult
	if _, err := r.send(ctx, op, http.MethodPost, req, &res); err != nil {
		return nil, err
	}
	if err := res.result.check(op); err != nil {
		return nil, r.fail(op, err)
	}
	return res.Hits.Hits, nil
}

// recallCandidate is a hit as a candidate: its text query's score (the
// hit's score when the server lists the names only and no knn matched
// it... which it cannot say: then the whole score), its exact cosine.
func (r *Reader) recallCandidate(op string, h *recallHit, v []float64) (recall.Candidate, error) {
	d := new(model.IndexDoc)
	if err := json.Unmarshal(h.Source, d); err != nil {
		return recall.Candidate{}, r.fail(op, fmt.Errorf("document %s: %w", model.Quote(h.ID), err))
	}
	if d.EventID == "" {
		d.EventID = h.ID
	}
	c := recall.Candidate{Doc: d}
	var scores map[string]float64
	if json.Unmarshal(h.Matched, &scores) == nil {
		c.BM25 = scores["text"]
	} else {
		var names []string
		if json.Unmarshal(h.Matched, &names) == nil {
			for _, n := range names {
				if n == "text" {
					c.BM25 = h.Score
				}
			}
		}
	}
	c.Cosine, c.HasCosine = recall.Cosine(v, d.Embedding)
	return c, nil
}
