package query

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TurnReader lists in either order when the index it wraps does (the
// inspector's o, G and :time go through it on an index with Coverage):
// the listings are the index's; in indexing order ListTurns is Turns, the
// archive's turns where the index lacks turn keys.
var _ SortedReader = TurnReader{}

func (r TurnReader) sorted() (SortedReader, error) {
	sr, ok := r.Reader.(SortedReader)
	if !ok {
		return nil, fmt.Errorf("%T cannot list by event time", r.Reader)
	}
	return sr, nil
}

// List is the wrapped index's List.
func (r TurnReader) List(ctx context.Context, q ListQuery) (Page, error) {
	sr, err := r.sorted()
	if err != nil {
		return Page{}, err
	}
	return sr.List(ctx, q)
}

// ListTurns is Turns in indexing order, else the wrapped index's.
func (r TurnReader) ListTurns(ctx context.Context, q ListQuery) (TurnPage, error) {
	if q.Sort == SortIndexed {
		return r.Turns(ctx, q.Expr, q.After, q.Limit)
	}
	sr, err := r.sorted()
	if err != nil {
		return TurnPage{}, err
	}
	return sr.ListTurns(ctx, q)
}

// Seek is the wrapped index's Seek.
func (r TurnReader) Seek(ctx context.Context, at time.Time) (Cursor, error) {
	sr, err := r.sorted()
	if err != nil {
		return "", err
	}
	return sr.Seek(ctx, at)
}

// Oldest is the wrapped index's Oldest.
func (r TurnReader) Oldest(ctx context.Context, q ListQuery) (Cursor, error) {
	sr, err := r.sorted()
	if err != nil {
		return "", err
	}
	return sr.Oldest(ctx, q)
}

// OldestTurns is the wrapped index's, in indexing order only while the
// index's turns are the listing's: the archive's turns (an index lacking
// turn keys) list from the newest, so their oldest page is not found.
func (r TurnReader) OldestTurns(ctx context.Context, q ListQuery) (Cursor, error) {
	sr, err := r.sorted()
	if err != nil {
		return "", err
	}
	if q.Sort == SortIndexed && r.lacksTurnKeys(ctx) {
		return "", errArchiveOldest
	}
	return sr.OldestTurns(ctx, q)
}

var errArchiveOldest = errors.New("turns from the archive list from the newest only: their oldest page is not known")
