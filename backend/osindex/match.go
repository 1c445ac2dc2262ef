package osindex

import (
	"context"
)

// matchChunk bounds the ids of one search (a terms query allows 65,536).
const matchChunk = 1000

// Match is the subset of ids whose documents match s (in no order). An id
// is the document's event_id, or its _id when the source has none (as
// decodeDoc reads it).
func (r *Reader) Match(ctx context.Context, s string, want []string) (map[string]bool, error) {
	e, err := parse(s)
	if err != nil {
		return nil, err
	}
	q := translate(e, r.now(), r.tenant, false)
	out := make(map[string]bool, len(want))
	for len(want) > 0 {
		n := min(len(want), matchChunk)
		chunk := want[:n]
		asked := make(map[string]bool, n)
		for _, id := range chunk {
			asked[id] = true
		}
		byID := obj{"bool": obj{"should": []any{obj{"terms": obj{fEventID: chunk}}, ids(chunk)}, "minimum_should_match": 1}}
		p, err := r.newest(ctx, "match", obj{"bool": obj{"filter": []any{q, byID}}}, "", n)
		if err != nil {
			return nil, err
		}
		for _, d := range p.Docs {
			if asked[d.EventID] {
				out[d.EventID] = true
			}
		}
		want = want[n:]
	}
	return out, nil
}
