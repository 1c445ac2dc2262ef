package osindex

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A document's position in ingestion order is (K, seq, id): K is
// ingested_at in epoch milliseconds (else its timestamp), seq its _seq_no,
// id its event_id; a scored search puts the score in front. Listings merge
// two searches by these values (docs/opensearch.md, Ingestion order).

type pos struct {
	scored bool
	score  float64
	raw    json.Number // the score as the server wrote it
	k      int64
	seq    int64
	id     string
}

// cmpPos orders positions ascending: score, K, seq, id.
func cmpPos(a, b pos) int {
	if a.scored && b.scored {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// searchAfter is p as search_after values.
func (p pos) searchAfter() []any {
	v := []any{p.k, p.seq, p.id}
	if p.scored {
		v = append([]any{p.raw}, v...)
	}
	return v
}

var errSort = errors.New("unexpected sort values")

// hitPos reads the position of a hit from its sort values.
func hitPos(h *hit, scored bool) (pos, error) {
	want := 3
	if scored {
		want = 4
	}
	if len(h.Sort) != want {
		return pos{}, fmt.Errorf("%w %v", errSort, h.Sort)
	}
	var p pos
	s := h.Sort
	if scored {
		var n json.Number
		if err := json.Unmarshal(s[0], &n); err != nil {
			return pos{}, fmt.Errorf("%w: score %s", errSort, s[0])
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return pos{}, fmt.Errorf("%w: score %s", errSort, s[0])
		}
		p.scored, p.score, p.raw = true, f, n
		s = s[1:]
	}
	var err1, err2, err3 error
	p.k, err1 = jsonInt64(s[0])
	p.seq, err2 = jsonInt64(s[1])
	err3 = json.Unmarshal(s[2], &p.id)
	if err := errors.Join(err1, err2, err3); err != nil {
		return pos{}, fmt.Errorf("%w %s: %w", errSort, h.Sort, err)
	}
	return p, nil
}

func jsonInt64(raw json.RawMessage) (int64, error) {
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}

// stream is one of the two halves of a listing.
type stream struct {
	key  string // the field holding K
	with bool   // the documents with ingested_at (else without)
}

var streams = [2]stream{{fIngestedAt, true}, {fTimestamp, false}}

// restrict scopes q to the stream's documents.
func (s stream) restrict(q obj) obj {
	if s.with {
		return obj{"bool": obj{"must": []any{q}, "filter": []any{exists(fIngestedAt)}}}
	}
	return obj{"bool": obj{"must": []any{q}, "must_not": []any{exists(fIngestedAt)}}}
}

// sort is the sort of the stream's search.
func (s stream) sort(desc, scored bool) []any {
	order := "asc"
	if desc {
		order = "desc"
	}
	var out []any
	if scored {
		out = append(out, obj{"_score": obj{"order": order}})
	}
	return append(out,
		obj{s.key: obj{"order": order, "unmapped_type": "date", "numeric_type": "date"}},
		obj{"_seq_no": obj{"order": order}},
		obj{fEventID: obj{"order": order, "unmapped_type": "keyword"}},
	)
}

// rangeFrom is K >= from on the stream's documents.
func (s stream) rangeFrom(from int64) obj {
	return rangeQ(s.key, obj{"gte": from, "format": "epoch_millis"})
}

// listing is a search in ingestion order over both streams.
type listing struct {
	op     string
	query  obj // the query, shared by both streams
	desc   bool
	scored bool
	after  *pos
	size   int // per stream
	// perStream adds a clause of the stream to the query (nil: none).
	perStream func(s stream) obj
	// source is the _source parameter (nil: whole documents).
	source any
	// docvalues lists docvalue_fields to fetch.
	docvalues []string
	// bounded: find a bound on K first (see list).
	bounded bool
}

// placed is a hit and its position.
type placed struct {
	hit *hit
	pos pos
}

// Bounded listings: a three-key sort visits every matching document, while a
// sort on K alone is pruned with the points index. So a bounded listing
// first sorts on K alone, beyond the cursor's K, to find a bound its first
// size hits cannot pass, then runs the three-key listing within it.

// list runs the listing and merges the streams: the first size hits in
// order (fewer only when there are no more). Beyond size the merge could
// miss hits of a stream that filled its size, so it stops there.
func (r *Reader) list(ctx context.Context, l listing) ([]placed, error) {
	if !l.bounded || l.scored {
		return r.list1(ctx, l)
	}
	bodies := make([]map[string]any, len(streams))
	for i, s := range streams {
		var f []any
		if l.perStream != nil {
			if extra := l.perStream(s); extra != nil {
				f = append(f, extra)
			}
		}
		if l.after != nil {
			op := "lt"
			if !l.desc {
				op = "gt"
			}
			f = append(f, rangeQ(s.key, obj{op: l.after.k, "format": "epoch_millis"}))
		}
		q := l.query
		if len(f) > 0 {
			q = obj{"bool": obj{"must": []any{q}, "filter": f}}
		}
		order := "asc"
		if l.desc {
			order = "desc"
		}
		bodies[i] = obj{
			"size":             l.size,
			"query":            s.restrict(q),
			"sort":             []any{obj{s.key: obj{"order": order, "unmapped_type": "date", "numeric_type": "date"}}},
			"track_total_hits": false,
			"_source":          false,
		}
	}
	res, err := r.msearch(ctx, l.op, bodies)
	if err != nil {
		return nil, err
	}
	if l.after == nil && len(res[0].Hits.Hits)+len(res[1].Hits.Hits) == 0 {
		return nil, nil // the first step saw the whole listing: nothing (an idle tail)
	}
	bounded := false
	var bound int64
	for _, rs := range res {
		hits := rs.Hits.Hits
		if len(hits) < l.size {
			continue
		}
		h := &hits[len(hits)-1]
		if len(h.Sort) != 1 {
			return nil, r.fail(l.op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		k, err := jsonInt64(h.Sort[0])
		if err != nil {
			return nil, r.fail(l.op, fmt.Errorf("%w %s", errSort, h.Sort))
		}
		switch {
		case !bounded:
			bound, bounded = k, true
		case l.desc:
			bound = max(bound, k)
		default:
			bound = min(bound, k)
		}
	}
	if bounded {
		prev := l.perStream
		op := "gte"
		if !l.desc {
			op = "lte"
		}
		l.perStream = func(s stream) obj {
			b := rangeQ(s.key, obj{op: bound, "format": "epoch_millis"})
			if prev != nil {
				if extra := prev(s); extra != nil {
					return obj{"bool": obj{"filter": []any{extra, b}}}
				}
			}
			return b
		}
	}
	return r.list1(ctx, l)
}

// list1 runs the listing in one _msearch.
func (r *Reader) list1(ctx context.Context, l listing) ([]placed, error) {
	bodies := make([]map[string]any, len(streams))
	for i, s := range streams {
		q := l.query
		if l.perStream != nil {
			if extra := l.perStream(s); extra != nil {
				q = obj{"bool": obj{"must": []any{q}, "filter": []any{extra}}}
			}
		}
		body := obj{
			"size":             l.size,
			"query":            s.restrict(q),
			"sort":             s.sort(l.desc, l.scored),
			"track_total_hits": false,
		}
		if l.after != nil {
			body["search_after"] = l.after.searchAfter()
		}
		if l.source != nil {
			body["_source"] = l.source
		}
		if len(l.docvalues) > 0 {
			body["docvalue_fields"] = l.docvalues
		}
		bodies[i] = body
	}
	res, err := r.msearch(ctx, l.op, bodies)
	if err != nil {
		return nil, err
	}
	var parts [2][]placed
	for i, rs := range res {
		hits := rs.Hits.Hits
		parts[i] = make([]placed, len(hits))
		for j := range hits {
			p, err := hitPos(&hits[j], l.scored)
			if err != nil {
				return nil, r.fail(l.op, err)
			}
			parts[i][j] = placed{&hits[j], p}
		}
	}
	out := merge(parts[0], parts[1], l.desc)
	return out[:min(len(out), l.size)], nil
}

// merge merges two lists sorted in the same direction.
func merge(a, b []placed, desc bool) []placed {
	out := make([]placed, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		c := cmpPos(a[0].pos, b[0].pos)
		if desc {
			c = -c
		}
		if c <= 0 {
			out = append(out, a[0])
			a = a[1:]
		} else {
			out = append(out, b[0])
			b = b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}
