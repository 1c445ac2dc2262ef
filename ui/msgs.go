package ui

import (
	"engram/ingest"
	"engram/ingest/follow"
	"engram/model"
	"engram/query"
	"engram/ui/widget/list"
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
	ev   list.Evicted
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

// followTickMsg: time to look for new lines in the followed files.
type followTickMsg struct{}

// followedMsg: a round on a followed file ended at at.
type followedMsg struct {
	file string
	at   follow.File
	sum  ingest.Summary
	err  error
}
