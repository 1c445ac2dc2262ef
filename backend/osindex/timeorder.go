package osindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"engram/query"
)

var _ query.SortedReader = (*Reader)(nil)

// Time order (query.SortTime): one search sorted on timestamp, then
// event_id, both descending, continued with search_after. A position is
// (timestamp in ms, event id); its cursor is kind 'm' with {"k": ms, "i":
// id}, and the listing continued from it holds the positions below it.
// Seek's cursor (ms+1, "") holds everything at or before ms: no event id
// is below "".

const kindTime = 'm'

// tpos is a position in time order.
type tpos struct {
	ms int64
	id string
}

type wireTime struct {
	K int64  `json:"k"`
	I string `json:"i"`
}

func timeCursor(p tpos) query.Cursor {
	b, _ := json.Marshal(wireTime{p.ms, p.id})
	return encode(kindTime, b)
}

// parseTime reads a time cursor; "" is nil (the newest).
func parseTime(c query.Cursor) (*tpos, error) {
	if c == "" {
		return nil, nil
	}
	b, err := decode(c, kindTime)
	if err != nil {
		return nil, err
	}
	var w wireTime
	if err := strictJSON(b, &w); err != nil {
		return nil, err
	}
	return &tpos{w.K, w.I}, nil
}

// timeSort is the sort of time order.
func timeSort(desc bool) []any {
	order := "asc"
	if desc {
		order = "desc"
	}
	return []any{
		obj{fTimestamp: obj{"order": order, "unmapped_type": "date", "numeric_type": "date"}},
		obj{fEventID: obj{"order": order, "unmapped_type": "keyword"}},
	}
}

// timeHit is a hit and its position.
type timeHit struct {
	hit *hit
	pos tpos
}

// byTime is the first size documents matching q in time order (newest
// first, or oldest with asc) after the position.
func (r *Reader) byTime(ctx context.Context, op string, q obj, after *tpos, size int, asc bool, source any, docvalues []string) ([]timeHit, error) {
	body := obj{"size": size, "query": q, "sort": timeSort(!asc), "track_total_hits": false}
	if after != nil {
		body["search_after"] = []any{after.ms, after.id}
	}
	if source != nil {
		body["_source"] = source
	}
	if len(docvalues) > 0 {
		body["docvalue_fields"] = docvalues
	}
	res, err := r.search(ctx, op, body)
	if err != nil {
		return nil, err
	}
	hits := res.Hits.Hits
	out := make([]timeHit, len(hits))
	for i := range hits {
		h := &hits[i]
		if len(h.Sort) != 2 {
			return nil, r.fail(op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		ms, err1 := jsonInt64(h.Sort[0])
		var id string
		err2 := json.Unmarshal(h.Sort[1], &id)
		if err := errors.Join(err1, err2); err != nil {
			return nil, r.fail(op, fmt.Errorf("%w %s: %w", errSort, h.Sort, err))
		}
		out[i] = timeHit{h, tpos{ms, id}}
	}
	return out, nil
}

// List is the documents matching q.Expr in q.Sort, newest first.
func (r *Reader) List(ctx context.Context, q query.ListQuery) (query.Page, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return query.Page{}, err
	}
	if q.Sort == query.SortIndexed {
		return r.Recent(ctx, q.Expr, q.After, q.Limit)
	}
	e, err := parse(q.Expr)
	if err != nil {
		return query.Page{}, err
	}
	after, err := parseTime(q.After)
	if err != nil {
		return query.Page{}, err
	}
	limit := pageLimit(q.Limit, maxLimit)
	hs, err := r.byTime(ctx, "list", translate(e, r.now(), r.tenant, false), after, limit+1, false, nil, nil)
	if err != nil {
		return query.Page{}, err
	}
	var pg query.Page
	for i, h := range hs {
		if i == limit {
			pg.Next = timeCursor(hs[limit-1].pos)
			break
		}
		d, err := r.decodeDoc("list", h.hit)
		if err != nil {
			return query.Page{}, err
		}
		pg.Docs = append(pg.Docs, d)
	}
	return pg, nil
}

// Seek is the SortTime cursor at the moment at: what is at or before it
// (to the millisecond) follows.
func (r *Reader) Seek(ctx context.Context, at time.Time) (query.Cursor, error) {
	ms := at.UnixMilli()
	if at.Before(time.UnixMilli(ms)) { // before 1970, UnixMilli rounds up
		ms--
	}
	return timeCursor(tpos{ms + 1, ""}), nil
}

// Oldest is the cursor after which List gives the q.Limit oldest matching
// documents ("" when every match fits in one page).
func (r *Reader) Oldest(ctx context.Context, q query.ListQuery) (query.Cursor, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return "", err
	}
	e, err := parse(q.Expr)
	if err != nil {
		return "", err
	}
	limit := pageLimit(q.Limit, maxLimit)
	tq := translate(e, r.now(), r.tenant, false)
	if q.Sort == query.SortTime {
		hs, err := r.byTime(ctx, "oldest", tq, nil, limit+1, true, false, nil)
		if err != nil || len(hs) <= limit {
			return "", err
		}
		return timeCursor(hs[limit].pos), nil
	}
	ps, err := r.list(ctx, listing{op: "oldest", query: tq, size: limit + 1, source: false, bounded: true})
	if err != nil || len(ps) <= limit {
		return "", err
	}
	return posCursor(kindRecent, ps[limit].pos), nil
}

// timeAtOrAfter matches the documents at or after p in time order
// (ascending).
func timeAtOrAfter(p tpos) obj {
	return obj{"bool": obj{"should": []any{
		rangeQ(fTimestamp, obj{"gt": p.ms, "format": "epoch_millis"}),
		obj{"bool": obj{"filter": []any{
			rangeQ(fTimestamp, obj{"gte": p.ms, "lte": p.ms, "format": "epoch_millis"}),
			rangeQ(fEventID, obj{"gte": p.id}),
		}}},
	}, "minimum_should_match": 1}}
}

// ListTurns is one row per turn in q.Sort, newest first: in time order by
// the turn's newest matching document, walked as Turns walks ingestion
// order.
func (r *Reader) ListTurns(ctx context.Context, q query.ListQuery) (query.TurnPage, error) {
	if err := query.CheckSort(q.Sort); err != nil {
		return query.TurnPage{}, err
	}
	if q.Sort == query.SortIndexed {
		return r.Turns(ctx, q.Expr, q.After, q.Limit)
	}
	e, err := parse(q.Expr)
	if err != nil {
		return query.TurnPage{}, err
	}
	before, err := parseTime(q.After)
	if err != nil {
		return query.TurnPage{}, err
	}
	limit := pageLimit(q.Limit, maxTurnsLimit)
	tq := translate(e, r.now(), r.tenant, false)
	var shown obj
	if before != nil {
		shown = timeAtOrAfter(*before)
	}
	type row struct {
		acc    *turnAcc
		newest tpos
	}
	met := map[string]bool{}
	var out []row
	walk := before
	chunk := min(4*(limit+1), maxWindow)
	for len(out) <= limit {
		need := limit + 1 - len(out)
		need += max(2, need/8)
		chunk = max(chunk, min(4*need, maxWindow))
		hs, err := r.byTime(ctx, "turns", tq, walk, chunk, false, false, []string{fTurnID, fTraceID, fEventID})
		if err != nil {
			return query.TurnPage{}, err
		}
		var keys []string
		newest := map[string]tpos{} // the first met in the walk
		n := 0
		for _, h := range hs {
			if len(keys) == need {
				break
			}
			n++
			p := h.pos
			walk = &p
			if k := hitTurnKey(h.hit); !met[k] {
				met[k] = true
				keys = append(keys, k)
				newest[k] = p
			}
		}
		if len(keys) > 0 {
			accs, err := r.sumTurns(ctx, tq, keys, shown)
			if err != nil {
				return query.TurnPage{}, err
			}
			for _, k := range keys {
				if a := accs[k]; a != nil && !a.shown {
					out = append(out, row{a, newest[k]})
				}
			}
		}
		if n == len(hs) && len(hs) < chunk {
			break // no more matching documents
		}
		chunk = min(2*chunk, maxWindow)
	}
	var p query.TurnPage
	for i, x := range out {
		if i == limit {
			p.Next = timeCursor(out[limit-1].newest)
			break
		}
		p.Turns = append(p.Turns, x.acc.TurnSummary)
	}
	return p, nil
}
