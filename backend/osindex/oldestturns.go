package osindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"engram/query"
)

// OldestTurns is the cursor after which ListTurns gives the q.Limit turns
// whose newest matching document is oldest ("" when every turn fits in one
// page). Walking oldest first, it asks one aggregation for the newest match
// of each turn met and stops once limit+1 have theirs within the walk, so
// the cost grows with the oldest turns' documents, not with the index.
func (r *Reader) OldestTurns(ctx context.Context, q query.ListQuery) (query.Cursor, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return "", err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return "", err
	}
	limit := pageLimit(q.Limit, maxTurnsLimit)
	tq := translate(e, r.now(), r.tenant, false)
	keyFields := []string{fTurnID, fTraceID, fEventID}
	if q.Sort == query.SortTime {
		p, err := oldestTurn(limit, oldestWalk[tpos]{
			walk: func(after *tpos, size int) ([]string, []tpos, error) {
				hs, err := r.byTime(ctx, "oldest turns", tq, after, size, true, false, keyFields)
				keys, ps := make([]string, len(hs)), make([]tpos, len(hs))
				for i, h := range hs {
					keys[i], ps[i] = hitTurnKey(h.hit), h.pos
				}
				return keys, ps, err
			},
			newest: func(keys []string) (map[string]tpos, error) { return r.newestByTime(ctx, tq, keys) },
			cmp:    cmpTpos,
		})
		if err != nil || p == nil {
			return "", err
		}
		return timeCursor(*p), nil
	}
	p, err := oldestTurn(limit, oldestWalk[pos]{
		walk: func(after *pos, size int) ([]string, []pos, error) {
			ps, err := r.list(ctx, listing{op: "oldest turns", query: tq, after: after, size: size,
				source: false, docvalues: keyFields, bounded: true})
			keys, out := make([]string, len(ps)), make([]pos, len(ps))
			for i, x := range ps {
				keys[i], out[i] = hitTurnKey(x.hit), x.pos
			}
			return keys, out, err
		},
		newest: func(keys []string) (map[string]pos, error) { return r.newestIngested(ctx, tq, keys) },
		cmp:    cmpPos,
	})
	if err != nil || p == nil {
		return "", err
	}
	return posCursor(kindTurns, *p), nil
}

// oldestWalk is what oldestTurn needs of an order: a walk oldest first
// (each document's turn key and position), the newest matching position
// of turns, and the order of positions.
type oldestWalk[P any] struct {
	walk   func(after *P, size int) ([]string, []P, error)
	newest func(keys []string) (map[string]P, error)
	cmp    func(a, b P) int
}

// oldestTurn is the newest position of the (limit+1)th oldest turn: nil
// when there are no more than limit.
func oldestTurn[P any](limit int, o oldestWalk[P]) (*P, error) {
	met := map[string]bool{}
	var newest []P
	var walked *P
	chunk := min(4*(limit+1), maxWindow)
	for {
		keys, ps, err := o.walk(walked, chunk)
		if err != nil {
			return nil, err
		}
		var fresh []string
		for _, k := range keys {
			if !met[k] {
				met[k] = true
				fresh = append(fresh, k)
			}
		}
		if len(ps) > 0 {
			walked = &ps[len(ps)-1]
		}
		if len(fresh) > 0 {
			m, err := o.newest(fresh)
			if err != nil {
				return nil, err
			}
			for _, k := range fresh {
				if p, ok := m[k]; ok {
					newest = append(newest, p)
				}
			}
		}
		done := len(ps) < chunk
		if len(newest) > limit {
			slices.SortFunc(newest, o.cmp)
			if done || o.cmp(newest[limit], *walked) <= 0 {
				return &newest[limit], nil
			}
		}
		if done {
			return nil, nil
		}
		chunk = min(2*chunk, maxWindow)
	}
}

func cmpTpos(a, b tpos) int {
	if a.ms != b.ms {
		if a.ms < b.ms {
			return -1
		}
		return 1
	}
	return strings.Compare(a.id, b.id)
}

// topHit is a top_hits answer of one hit at most.
type topHit struct {
	Hits struct {
		Hits []hit `json:"hits"`
	} `json:"hits"`
}

// newestByTime is, per turn of keys, the time order position of its
// newest document matching q.
func (r *Reader) newestByTime(ctx context.Context, q obj, keys []string) (map[string]tpos, error) {
	const op = "oldest turns"
	buckets, err := r.aggTurns(ctx, q, keys, obj{"n": obj{"top_hits": obj{"size": 1, "sort": timeSort(true), "_source": false}}})
	if err != nil {
		return nil, err
	}
	out := make(map[string]tpos, len(buckets))
	for key, b := range buckets {
		var th topHit
		if err := json.Unmarshal(b["n"], &th); err != nil {
			return nil, r.fail(op, fmt.Errorf("aggregation answer: n: %w", err))
		}
		if len(th.Hits.Hits) == 0 {
			continue
		}
		s := th.Hits.Hits[0].Sort
		if len(s) != 2 {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, s))
		}
		ms, err1 := jsonInt64(s[0])
		var id string
		err2 := json.Unmarshal(s[1], &id)
		if err := errors.Join(err1, err2); err != nil {
			return nil, r.fail(op, fmt.Errorf("%w %s: %w", errSort, s, err))
		}
		out[key] = tpos{ms, id}
	}
	return out, nil
}

// newestIngested is, per turn of keys, the ingestion order position of
// its newest document matching q: the later of each stream's newest.
func (r *Reader) newestIngested(ctx context.Context, q obj, keys []string) (map[string]pos, error) {
	const op = "oldest turns"
	buckets, err := r.aggTurns(ctx, q, keys, obj{
		"na": obj{"filter": exists(fIngestedAt), "aggs": obj{"h": top(streams[0], true, false)}},
		"nb": obj{"filter": withoutIngestedAt(), "aggs": obj{"h": top(streams[1], true, false)}},
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]pos, len(buckets))
	for key, b := range buckets {
		var best *pos
		for _, name := range []string{"na", "nb"} {
			var fh filteredHits
			if err := json.Unmarshal(b[name], &fh); err != nil {
				return nil, r.fail(op, fmt.Errorf("aggregation answer: %s: %w", name, err))
			}
			h := fh.one()
			if h == nil {
				continue
			}
			p, err := hitPos(h, false)
			if err != nil {
				return nil, r.fail(op, err)
			}
			if best == nil || cmpPos(p, *best) > 0 {
				best = &p
			}
		}
		if best != nil {
			out[key] = *best
		}
	}
	return out, nil
}
