package uikit

import (
	"context"

	"engram/query"
)

// TurnFinder is a Reader that finds the turn of an event in the archive
// when the index holds no turn key for it (query.TurnReader, over an index
// the source system wrote): the Turns view and the detail say so.
type TurnFinder interface {
	FindTurn(ctx context.Context, eventID string) (*query.ArchiveTurn, error)
}

// ArchiveTurnOf is r as a TurnFinder, when it finds turns in the archive.
func ArchiveTurnOf(r Reader) (TurnFinder, bool) {
	f, ok := r.(TurnFinder)
	return f, ok
}
