package stream

import (
	"engram/model"
	"engram/query"
	"engram/ui/widget/list"
)

// Messages carry the request they answer (seq, cursor, id) so that an
// answer to a question no longer asked is dropped.

// headMsg is the first page of the stream (start-up, filter, reload).
type headMsg struct {
	seq  uint64
	page query.Page
	// tail is where the tail starts, read before the rows (tailOK) by
	// every head load asked while the tail has not started yet.
	tail   query.Cursor
	tailOK bool
	first  bool // start-up load: an error is fatal
	err    error
}

// olderMsg is a page below the last loaded row.
type olderMsg struct {
	seq   uint64
	after query.Cursor
	page  query.Page
	err   error
}

// newerMsg is an evicted page read back above the first row.
type newerMsg struct {
	seq  uint64
	ev   list.Evicted
	page query.Page
	err  error
}

// TickMsg says it is time to poll the tail.
type TickMsg struct{}

// tailMsg is what the tail found. docs are the new documents, oldest first,
// already filtered by the stream's expression; seen is how many were new
// before filtering.
type tailMsg struct {
	seq  uint64
	from query.Cursor
	next query.Cursor
	docs []*model.IndexDoc
	seen int
	err  error
}

// SeekDoneMsg says a jump selected a row it had to page to (the detail, if
// open, follows the selection).
type SeekDoneMsg struct{}

// StartFailedMsg says the first load failed; the index cannot be read.
type StartFailedMsg struct{ Err error }

// FilterRefusedMsg says the index refused Expr (it parsed); the rows shown stay
// those of the last expression that worked (Shown).
type FilterRefusedMsg struct {
	Expr string
	Err  error
}

// WatchMsg comes every second (or poll) once the tail has started, whatever else
// happens, so that a follow whose poll never answers is drawn as stalled.
type WatchMsg struct{}
