package osindex

import (
	"cmp"
	"context"
	"slices"
	"time"

	"engram/query"
)

// Tail defaults (see docs/opensearch.md, Tail).
const (
	// defaultTailOverlap is how far behind its position a tail looks again
	// for documents that became visible late.
	defaultTailOverlap = 10 * time.Second
	// defaultTailSeen bounds the ids a tail cursor keeps; beyond it the
	// overlap window shrinks.
	defaultTailSeen = 4096
)

// TailStart is the cursor of the newest document now indexed: a Tail from
// it gives the documents that become visible later, including any that
// appear late within the overlap window behind it.
func (r *Reader) TailStart(ctx context.Context) (query.Cursor, error) {
	q := translate(nil, time.Time{}, r.tenant, false)
	ps, err := r.list(ctx, listing{op: "tail start", query: q, desc: true, size: 1, source: false, bounded: true})
	if err != nil {
		return "", err
	}
	if len(ps) == 0 {
		return "", nil // an empty index: everything to come
	}
	p := ps[0].pos
	lo := p.k - r.overlap.Milliseconds()
	// The documents in the window, newest first, one more than the cursor
	// keeps.
	ps, err = r.list(ctx, listing{op: "tail start", query: q, desc: true, size: r.seenCap + 1, source: false,
		perStream: func(s stream) obj { return s.rangeFrom(lo) }, bounded: true})
	if err != nil {
		return "", err
	}
	st := tailState{P: &p, L: lo}
	for _, x := range ps {
		st.Seen = append(st.Seen, seen{x.pos.k, x.hit.ID})
	}
	if len(ps) > r.seenCap {
		// The window holds more than the cursor keeps: start it after the
		// oldest K listed (whose group may go on beyond the list).
		st.L = ps[len(ps)-1].pos.k + 1
	}
	return tailCursor(r.bound(st)), nil
}

// Tail is every document indexed after the cursor, oldest first, at most
// limit of them; Next is the cursor to poll from (after itself when there
// is nothing new).
//
// The query is "K >= L and not one of the ids seen" while the overlap
// window is open (L <= the position's K), else search_after the position.
func (r *Reader) Tail(ctx context.Context, after query.Cursor, limit int) (query.Page, error) {
	st, err := parseTail(after)
	if err != nil {
		return query.Page{}, err
	}
	limit = pageLimit(limit, maxTailLimit)
	l := listing{op: "tail", query: translate(nil, time.Time{}, r.tenant, false), size: limit, bounded: true}
	switch {
	case st.P == nil: // from the start
	case st.L <= st.P.k:
		b := &boolQuery{filter: []any{l.query}}
		if len(st.Seen) > 0 {
			idList := make([]string, len(st.Seen))
			for i, s := range st.Seen {
				idList[i] = s.id
			}
			b.mustNot = []any{ids(idList)}
		}
		l.query = b.query()
		lo := st.L
		l.perStream = func(s stream) obj { return s.rangeFrom(lo) }
	default:
		l.after = st.P
	}
	ps, err := r.list(ctx, l)
	if err != nil {
		return query.Page{}, err
	}
	if len(ps) == 0 {
		return query.Page{Next: after}, nil
	}
	docs, err := r.decodeDocs("tail", ps)
	if err != nil {
		return query.Page{}, err
	}
	// The new cursor: the latest position delivered, the window behind it,
	// and the ids delivered within the window.
	p := ps[len(ps)-1].pos
	if st.P != nil && cmpPos(*st.P, p) > 0 {
		p = *st.P // only late documents: the position stays
	}
	next := tailState{P: &p, L: p.k - r.overlap.Milliseconds(), Seen: st.Seen}
	if st.P != nil {
		next.L = max(next.L, st.L) // the window never reopens
	}
	for _, x := range ps {
		next.Seen = append(next.Seen, seen{x.pos.k, x.hit.ID})
	}
	return query.Page{Docs: docs, Next: tailCursor(r.bound(next))}, nil
}

// bound drops the seen ids below L and, when more than seenCap remain,
// raises L past the oldest groups of equal K until they fit (past the
// position itself when its own group is too large: the tail then goes on
// with search_after alone).
func (r *Reader) bound(st tailState) tailState {
	kept := make([]seen, 0, len(st.Seen))
	for _, s := range st.Seen {
		if s.k >= st.L {
			kept = append(kept, s)
		}
	}
	slices.SortStableFunc(kept, func(a, b seen) int { return cmp.Compare(a.k, b.k) })
	if len(kept) > r.seenCap {
		cut := len(kept) - r.seenCap // drop kept[:cut] and the rest of its last group
		l := kept[cut-1].k + 1
		for cut < len(kept) && kept[cut].k < l {
			cut++
		}
		kept = kept[cut:]
		st.L = l
		if len(kept) == 0 {
			st.L = max(st.L, st.P.k+1)
		}
	}
	st.Seen = kept
	return st
}
