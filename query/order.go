package query

import (
	"context"
	"fmt"
	"time"
)

// Sort is the order of a listing of documents or turns: newest first either
// way, by when engram indexed them or by when they happened.
type Sort int

const (
	// SortIndexed is ingestion order, newest first: what Recent, Search
	// without free words and Turns give (the zero value).
	SortIndexed Sort = iota
	// SortTime is event time, newest first: the timestamp to the
	// millisecond, equal timestamps by event id (descending). Turns are
	// ordered by their newest matching document in that order.
	SortTime
)

// Sorts names the orders as ParseSort reads them.
var Sorts = []string{"indexed", "time"}

func (s Sort) String() string {
	if s >= 0 && int(s) < len(Sorts) {
		return Sorts[s]
	}
	return fmt.Sprintf("Sort(%d)", int(s))
}

// ParseSort reads "indexed" or "time" ("" is SortIndexed).
func ParseSort(s string) (Sort, error) {
	switch s {
	case "", "indexed":
		return SortIndexed, nil
	case "time":
		return SortTime, nil
	}
	return 0, fmt.Errorf("sort %q: want indexed or time", s)
}

// ListQuery asks for one page of a listing in an order.
type ListQuery struct {
	// Expr filters the listing ("" matches everything); its free words
	// filter too: a listing is never ranked (Search ranks).
	Expr string
	Sort Sort
	// After continues a listing of the same Sort (a cursor of another
	// order, or of another call, is an error); "" is the newest.
	After Cursor
	// Limit is the most documents (turns) of the page; <= 0 is the
	// backend's default, and larger limits may be cut to its maximum.
	Limit int
}

// SortedReader is the part of a Reader that lists in either order. Both
// backends implement it; the zero ListQuery lists as Recent does.
type SortedReader interface {
	// List is the documents matching q.Expr in q.Sort, newest first; with
	// SortIndexed it is Recent.
	List(ctx context.Context, q ListQuery) (Page, error)
	// ListTurns is one row per turn in q.Sort, as Turns sums them up
	// (filtered, the turns with a match, each row the whole turn's); with
	// SortIndexed it is Turns.
	ListTurns(ctx context.Context, q ListQuery) (TurnPage, error)
	// Seek is the cursor of the SortTime listings (List and ListTurns)
	// at the moment at: continued from it, a listing holds the documents
	// (turns whose newest matching document is) at or before at, to the
	// millisecond, newest first.
	Seek(ctx context.Context, at time.Time) (Cursor, error)
	// Oldest is the cursor of the oldest page of the List listing q
	// (q.After is ignored): continued from it, List gives the q.Limit
	// oldest matching documents, newest first. It is "" when they all
	// fit in one page.
	Oldest(ctx context.Context, q ListQuery) (Cursor, error)
	// OldestTurns is Oldest for the ListTurns listing q: continued from
	// it, ListTurns gives the q.Limit turns whose newest matching
	// document is oldest, newest first. It is "" when they all fit in
	// one page. The inspector's G goes there without paging through the
	// turns in between.
	OldestTurns(ctx context.Context, q ListQuery) (Cursor, error)
}

// CheckSort is an error for a Sort no backend knows.
func CheckSort(s Sort) error {
	if s != SortIndexed && s != SortTime {
		return fmt.Errorf("sort %d: want SortIndexed or SortTime", int(s))
	}
	return nil
}
