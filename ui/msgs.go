package ui

import (
	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/ingest/follow"
	"engram/model"
	"engram/query"
)

// Messages carry the request they answer (seq, cursor, id) so that an
// answer to a question no longer asked is dropped.

// headMsg is the first page of the stream (start-up, filter, reload).
type headMsg struct {
	seq   uint64
	page  query.Page
	tail  query.Cursor // set at start-up: where the tail starts
	first bool         // start-up load: an error is fatal
	err   error
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
	ev   evicted
	page query.Page
	err  error
}

// tailTickMsg: time to poll the tail.
type tailTickMsg struct{}

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

// countMsg is the number of documents in the index.
type countMsg struct {
	n   int64
	err error
}

// archiveMsg answers one archive fetch.
type archiveMsg struct {
	req  uint64
	id   string
	arch *query.Archived
	tree *jnode // the archived event parsed, when it parses
	err  error
}

// turnsMsg is a page of turns.
type turnsMsg struct {
	seq   uint64
	after query.Cursor
	older bool
	ev    *evicted
	page  query.TurnPage
	err   error
}

// chainMsg is the causal chain of one turn.
type chainMsg struct {
	key  string
	docs []*model.IndexDoc
	err  error
}

// pipeMsg is a stage or a finished trace from a pipeline this process runs.
type pipeMsg struct {
	run   uint64
	stage *ingest.StageEvent
	trace *ingest.Trace
	// record is set for the record form's own event.
	record bool
}

// recordedMsg: the record form's event went through the pipeline.
type recordedMsg struct {
	id    string
	trace *ingest.Trace
	err   error
}

// followTickMsg: time to look for new lines in the followed files.
type followTickMsg struct{}

// followedMsg: a round on a followed file ended at at.
type followedMsg struct {
	file string
	at   follow.File
	sum  ingest.Summary
	err  error
}

// docMsg is one index document looked up by id (to select it).
type docMsg struct {
	id  string
	doc *model.IndexDoc
	err error
}

// observedMsg is a status line from a pipeline's observer: it comes
// through the pipeline channel, whose listener must then listen again.
type observedMsg struct{ statusMsg }

// statusMsg puts a line in the status bar.
type statusMsg struct {
	text string
	err  bool
}

// openDetailMsg asks the root to show a document in the detail view.
type openDetailMsg struct {
	doc *model.IndexDoc
	// nav steps from this document to the next and previous ones.
	nav navigator
}

// navigator moves the detail view through the list it was opened from.
type navigator interface {
	// step returns the document delta away from from (nil at an end), and
	// what the list needs to load because of the move.
	step(from string, delta int) (*model.IndexDoc, tea.Cmd)
}
