package uikit

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
)

// StatusMsg puts a line in the status bar.
type StatusMsg struct {
	Text string
	Err  bool
}

// StatusCmd is a command that puts text in the status bar.
func StatusCmd(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return StatusMsg{text, isErr} }
}

// ObservedMsg is a status line from a pipeline's observer: it comes
// through the pipeline channel, whose listener must then listen again.
type ObservedMsg struct{ StatusMsg }

// PipeMsg is a stage or a finished trace from a pipeline this process runs.
type PipeMsg struct {
	Run   uint64
	Stage *ingest.StageEvent
	Trace *ingest.Trace
	// Record is set for the record form's own event.
	Record bool
}

// OpenDetailMsg asks the root to show a document in the detail view.
type OpenDetailMsg struct {
	Doc *model.IndexDoc
	// Nav steps from this document to the next and previous ones; nil
	// when the document was opened from no list.
	Nav Navigator
}

// Navigator moves the detail view through the list it was opened from.
type Navigator interface {
	// Step returns the document delta away from from (nil at an end), and
	// what the list needs to load because of the move.
	Step(from string, delta int) (*model.IndexDoc, tea.Cmd)
}

// CountMsg is the number of documents in the index.
type CountMsg struct {
	N   int64
	Err error
}

// LoadCount counts the documents in the index.
func LoadCount(ctx context.Context, r Reader) tea.Cmd {
	return func() tea.Msg {
		n, err := r.Count(ctx)
		return CountMsg{n, err}
	}
}
