package query_test

import (
	"context"
	"testing"
	"time"

	"engram/query"
)

// sortedStub is an index that lists in either order (only what the test
// calls).
type sortedStub struct {
	query.Reader
	calls []string
}

func (s *sortedStub) List(context.Context, query.ListQuery) (query.Page, error) {
	s.calls = append(s.calls, "List")
	return query.Page{Next: "n"}, nil
}

func (s *sortedStub) ListTurns(context.Context, query.ListQuery) (query.TurnPage, error) {
	s.calls = append(s.calls, "ListTurns")
	return query.TurnPage{}, nil
}

func (s *sortedStub) Seek(context.Context, time.Time) (query.Cursor, error) {
	s.calls = append(s.calls, "Seek")
	return "s", nil
}

func (s *sortedStub) Oldest(context.Context, query.ListQuery) (query.Cursor, error) {
	s.calls = append(s.calls, "Oldest")
	return "o", nil
}

func (s *sortedStub) OldestTurns(context.Context, query.ListQuery) (query.Cursor, error) {
	s.calls = append(s.calls, "OldestTurns")
	return "t", nil
}

// coveredStub is a sortedStub whose documents lack turn_id: its turns are
// the archive's.
type coveredStub struct{ *sortedStub }

func (coveredStub) Coverage(context.Context) (query.Coverage, error) {
	return query.Coverage{Total: 3, Plain: 3, Lacking: map[string]int64{"turn_id": 3}}, nil
}

// TestTurnReaderOrder: the inspector's reader on an index with coverage
// lists in time order through the index it wraps, and says so when that
// index cannot.
func TestTurnReaderOrder(t *testing.T) {
	ctx := context.Background()
	s := &sortedStub{}
	var sr query.SortedReader = query.TurnReader{Reader: s}
	if p, err := sr.List(ctx, query.ListQuery{Sort: query.SortTime}); err != nil || p.Next != "n" {
		t.Fatalf("List: %v %v", p, err)
	}
	// Only the calls that reach the reader are counted, not their answers.
	_, _ = sr.ListTurns(ctx, query.ListQuery{Sort: query.SortTime})
	_, _ = sr.Seek(ctx, time.Now())
	_, _ = sr.Oldest(ctx, query.ListQuery{})
	_, _ = sr.OldestTurns(ctx, query.ListQuery{})
	if got := len(s.calls); got != 5 {
		t.Fatalf("calls %v, want List, ListTurns, Seek, Oldest, OldestTurns", s.calls)
	}
	// The archive's turns list from the newest only: G there is refused,
	// not answered with the index's single-event turns.
	archived := query.TurnReader{Reader: coveredStub{&sortedStub{}}}
	if c, err := archived.OldestTurns(ctx, query.ListQuery{}); err == nil {
		t.Fatalf("OldestTurns over the archive's turns = %q, want an error", c)
	}
	if c, err := archived.OldestTurns(ctx, query.ListQuery{Sort: query.SortTime}); err != nil || c != "t" {
		t.Fatalf("OldestTurns by event time = %q, %v: want the index's", c, err)
	}
	plain := query.TurnReader{Reader: struct{ query.Reader }{}}
	if _, err := plain.List(ctx, query.ListQuery{Sort: query.SortTime}); err == nil {
		t.Fatal("List over an index without time order gave no error")
	}
	if _, err := plain.Seek(ctx, time.Now()); err == nil {
		t.Fatal("Seek over an index without time order gave no error")
	}
}
