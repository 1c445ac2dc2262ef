package querytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/query"
)

// byTime is docs in query.SortTime: newest first by timestamp (to the
// millisecond), equal timestamps by event id descending.
func byTime(docs []*model.IndexDoc) []*model.IndexDoc {
	out := slices.Clone(docs)
	slices.SortStableFunc(out, func(a, b *model.IndexDoc) int {
		if ta, tb := millis(a.Timestamp), millis(b.Timestamp); ta != tb {
			if ta > tb {
				return -1
			}
			return 1
		}
		return strings.Compare(b.EventID, a.EventID)
	})
	return out
}

// turnRowsByTime is turnRows ordered by each turn's newest document in
// time order.
func turnRowsByTime(docs []*model.IndexDoc) []query.TurnSummary {
	rank := map[string]int{}
	for i, d := range byTime(docs) {
		if _, ok := rank[d.TurnKey()]; !ok {
			rank[d.TurnKey()] = i
		}
	}
	rows := turnRows(docs)
	slices.SortStableFunc(rows, func(a, b query.TurnSummary) int { return rank[a.Key] - rank[b.Key] })
	return rows
}

// testOrder checks the listings of query.SortedReader: List and ListTurns
// in both orders, paged; Seek to a moment; Oldest.
func (s *suite) testOrder(t *testing.T) {
	sr, ok := s.all.(query.SortedReader)
	if !ok {
		t.Fatalf("%T does not list in time order (query.SortedReader)", s.all)
	}
	// The data set has equal timestamps, which the event id orders.
	ties := 0
	td := byTime(s.docs)
	for i := 1; i < len(td); i++ {
		if millis(td[i-1].Timestamp) == millis(td[i].Timestamp) {
			ties++
		}
	}
	if ties == 0 {
		t.Fatal("the data set has no equal timestamps")
	}
	list := func(r query.SortedReader, q query.ListQuery) func(after query.Cursor, limit int) (query.Page, error) {
		return func(after query.Cursor, limit int) (query.Page, error) {
			q.After, q.Limit = after, limit
			return r.List(s.ctx, q)
		}
	}
	exprs := []string{"", "tag:demo", "memory", "-type:user_input success:false", "session:sess-2", "turn:" + sharedTrace, topWord + " since:2d", "since:1d"}
	for i, src := range exprs {
		e := mustParse(t, src)
		limits := []int{7, 1000}
		if i < 2 { // pages of one, for a few: a call a document
			limits = append(limits, 1)
		}
		for _, limit := range limits {
			now := time.Now()
			got := pages(t, fmt.Sprintf("List(%q, time)", src), limit, list(sr, query.ListQuery{Expr: src, Sort: query.SortTime}))
			if d := diff(got, ids(byTime(filter(s.docs, e, now)))); d != "" {
				t.Errorf("List(%q, time) limit %d: %s", src, limit, d)
			}
			got = pages(t, fmt.Sprintf("List(%q, indexed)", src), limit, list(sr, query.ListQuery{Expr: src}))
			if d := diff(got, ids(reversed(filter(s.docs, e, now)))); d != "" {
				t.Errorf("List(%q, indexed) limit %d: %s", src, limit, d)
			}
		}
	}

	// Seek: everything at or before a moment, to the millisecond.
	mid := td[len(td)/2]
	at := time.UnixMilli(millis(mid.Timestamp))
	for _, c := range []struct {
		at  time.Time
		src string
	}{{at, ""}, {at.Add(999 * time.Microsecond), ""}, {at.Add(-time.Millisecond), ""}, {at, "tag:demo"}, {at.Add(-6 * time.Hour), "-success:false"}, {at.Add(time.Hour), "type:" + model.TypeToolResult}} {
		cur, err := sr.Seek(s.ctx, c.at)
		if err != nil {
			t.Fatalf("Seek(%s): %v", c.at, err)
		}
		var want []*model.IndexDoc
		for _, d := range filter(s.docs, mustParse(t, c.src), time.Now()) {
			if millis(d.Timestamp) <= c.at.UnixMilli() {
				want = append(want, d)
			}
		}
		first := true
		got := pages(t, "List from Seek", 9, func(after query.Cursor, limit int) (query.Page, error) {
			if first {
				after, first = cur, false
			}
			return sr.List(s.ctx, query.ListQuery{Expr: c.src, Sort: query.SortTime, After: after, Limit: limit})
		})
		if d := diff(got, ids(byTime(want))); d != "" {
			t.Errorf("List(%q, time) from Seek(%s): %s", c.src, c.at.UTC().Format(time.RFC3339Nano), d)
		}
		// Turns from the moment: those whose newest matching document is
		// at or before it.
		p, err := sr.ListTurns(s.ctx, query.ListQuery{Expr: c.src, Sort: query.SortTime, After: cur, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var wantTurns []string
		for _, r := range turnRowsByTime(filter(s.docs, mustParse(t, c.src), time.Now())) {
			if r.Last.UnixMilli() <= c.at.UnixMilli() {
				wantTurns = append(wantTurns, r.Key)
			}
		}
		var gotTurns []string
		for _, r := range p.Turns {
			gotTurns = append(gotTurns, r.Key)
		}
		if d := diff(gotTurns, wantTurns); d != "" {
			t.Errorf("ListTurns(%q, time) from Seek(%s): %s", c.src, c.at.UTC().Format(time.RFC3339Nano), d)
		}
	}

	// Oldest: the last page, in either order.
	for _, src := range []string{"", "tag:demo", "memory"} {
		all := filter(s.docs, mustParse(t, src), time.Now())
		for _, sort := range []query.Sort{query.SortIndexed, query.SortTime} {
			want := reversed(all)
			if sort == query.SortTime {
				want = byTime(all)
			}
			for _, limit := range []int{1, 7, len(all), len(all) + 5} {
				cur, err := sr.Oldest(s.ctx, query.ListQuery{Expr: src, Sort: sort, Limit: limit})
				if err != nil {
					t.Fatalf("Oldest(%q, %s, %d): %v", src, sort, limit, err)
				}
				if limit >= len(all) {
					if cur != "" {
						t.Errorf("Oldest(%q, %s, %d) of %d documents = %q, want \"\"", src, sort, limit, len(all), cur)
					}
					continue
				}
				p, err := sr.List(s.ctx, query.ListQuery{Expr: src, Sort: sort, After: cur, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				if d := diff(ids(p.Docs), ids(want[len(want)-limit:])); d != "" || p.Next != "" {
					t.Errorf("List(%q, %s) from Oldest(%d): %s, next %q", src, sort, limit, d, p.Next)
				}
			}
		}
	}

	// OldestTurns: the last page of turns, in either order, filtered or
	// not (the whole turns' rows, each placed by its newest match).
	for _, src := range []string{"", "tag:demo", "success:false", topWord, "-tenant:" + TenantA} {
		s.checkOldestTurns(t, sr, s.docs, src)
	}

	// Turns in time order, paged.
	for i, src := range []string{"", "tag:demo", "success:false", topWord, "-tenant:" + TenantA, "since:1d", "turn:" + sharedTrace} {
		limits := []int{4, 1000}
		if i < 2 {
			limits = append(limits, 1)
		}
		for _, limit := range limits {
			s.checkTurnsOrder(t, sr, s.docs, src, limit, query.SortTime)
			s.checkTurnsOrder(t, sr, s.docs, src, limit, query.SortIndexed)
		}
	}

	// A tenant's reader in time order.
	r := s.h.Open(t, query.Options{Tenant: TenantA})
	defer r.Close()
	tr := r.(query.SortedReader)
	vis := visible(s.docs, TenantA)
	for _, src := range []string{"", "-tag:demo"} {
		got := pages(t, "List(tenant, time)", 13, list(tr, query.ListQuery{Expr: src, Sort: query.SortTime}))
		if d := diff(got, ids(byTime(filter(vis, mustParse(t, src), time.Now())))); d != "" {
			t.Errorf("tenant %s: List(%q, time): %s", TenantA, src, d)
		}
		s.checkTurnsOrder(t, tr, vis, src, 5, query.SortTime)
		s.checkOldestTurns(t, tr, vis, src)
	}

	// A cursor of the other order, a sort no one knows: errors.
	p, err := sr.List(s.ctx, query.ListQuery{Limit: 3})
	if err != nil || p.Next == "" {
		t.Fatalf("List = %v, %v", p.Next, err)
	}
	if _, err := sr.List(s.ctx, query.ListQuery{Sort: query.SortTime, After: p.Next, Limit: 3}); err == nil {
		t.Error("List(time) took a cursor of ingestion order")
	}
	if _, err := sr.List(s.ctx, query.ListQuery{Sort: query.Sort(7)}); err == nil {
		t.Error("List(sort 7) gave no error")
	}
	if _, err := sr.List(s.ctx, query.ListQuery{Sort: query.SortTime, Expr: "latency>"}); err == nil {
		t.Error("List(bad expression) gave no error")
	}
}

// checkTurnsOrder pages through ListTurns(src) in sort and compares with
// the reference over docs (the reader's visible documents).
func (s *suite) checkTurnsOrder(t *testing.T, r query.SortedReader, docs []*model.IndexDoc, src string, limit int, sort query.Sort) {
	t.Helper()
	filtered := filter(docs, mustParse(t, src), time.Now())
	want := turnRows(filtered)
	if sort == query.SortTime {
		want = turnRowsByTime(filtered)
	}
	want = wholeTurns(want, docs)
	var got []query.TurnSummary
	var after query.Cursor
	for n := 0; ; n++ {
		p, err := r.ListTurns(s.ctx, query.ListQuery{Expr: src, Sort: sort, After: after, Limit: limit})
		if err != nil {
			t.Fatalf("ListTurns(%q, %s) page %d: %v", src, sort, n, err)
		}
		if len(p.Turns) > limit {
			t.Fatalf("ListTurns(%q, %s) page %d: %d rows, limit %d", src, sort, n, len(p.Turns), limit)
		}
		got = append(got, p.Turns...)
		if p.Next == "" || n > 1000 {
			break
		}
		if len(p.Turns) == 0 {
			t.Fatalf("ListTurns(%q, %s) page %d: empty page with a next cursor", src, sort, n)
		}
		after = p.Next
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("ListTurns(%q, %s) limit %d: %d rows, want %d; missing %s", src, sort, limit, len(got), len(want), turnString(want[i]))
			return
		case i >= len(want):
			t.Errorf("ListTurns(%q, %s) limit %d: %d rows, want %d; extra %s", src, sort, limit, len(got), len(want), turnString(got[i]))
			return
		case !sameTurn(got[i], want[i]):
			t.Errorf("ListTurns(%q, %s) limit %d row %d:\n got %s\nwant %s", src, sort, limit, i, turnString(got[i]), turnString(want[i]))
			return
		}
	}
}

// checkOldestTurns: ListTurns continued from OldestTurns is the limit
// oldest turns of the listing, and the last page; "" when one page holds
// them all.
func (s *suite) checkOldestTurns(t *testing.T, r query.SortedReader, docs []*model.IndexDoc, src string) {
	t.Helper()
	filtered := filter(docs, mustParse(t, src), time.Now())
	for _, sort := range []query.Sort{query.SortIndexed, query.SortTime} {
		want := turnRows(filtered)
		if sort == query.SortTime {
			want = turnRowsByTime(filtered)
		}
		var keys []string
		for _, w := range want {
			keys = append(keys, w.Key)
		}
		for _, limit := range []int{1, 4, len(keys), len(keys) + 3} {
			if limit == 0 {
				continue
			}
			cur, err := r.OldestTurns(s.ctx, query.ListQuery{Expr: src, Sort: sort, Limit: limit})
			if err != nil {
				t.Fatalf("OldestTurns(%q, %s, %d): %v", src, sort, limit, err)
			}
			if limit >= len(keys) {
				if cur != "" {
					t.Errorf("OldestTurns(%q, %s, %d) of %d turns = %q, want \"\"", src, sort, limit, len(keys), cur)
				}
				continue
			}
			p, err := r.ListTurns(s.ctx, query.ListQuery{Expr: src, Sort: sort, After: cur, Limit: limit})
			if err != nil {
				t.Fatalf("ListTurns(%q, %s) from OldestTurns(%d): %v", src, sort, limit, err)
			}
			var got []string
			for _, x := range p.Turns {
				got = append(got, x.Key)
			}
			if d := diff(got, keys[len(keys)-limit:]); d != "" || p.Next != "" {
				t.Errorf("ListTurns(%q, %s) from OldestTurns(%d): %s, next %q", src, sort, limit, d, p.Next)
			}
		}
	}
}
