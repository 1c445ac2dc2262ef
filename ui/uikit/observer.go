package uikit

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
)

// Observer forwards a pipeline's stages and traces to the program.
// It implements ingest.Observer and ingest.OutageObserver.
type Observer struct {
	Ctx    context.Context
	Ch     chan<- tea.Msg
	Run    uint64 // tells apart the pipelines (each numbers its events from 1)
	Record bool
}

func (o Observer) send(m tea.Msg) {
	select {
	case o.Ch <- m:
	case <-o.Ctx.Done():
	}
}

// Stage sends a pipeline stage's event to the inspector.
func (o Observer) Stage(e ingest.StageEvent) {
	o.send(PipeMsg{Run: o.Run, Stage: &e, Record: o.Record})
}

// Done sends a finished run's trace to the inspector.
func (o Observer) Done(t *ingest.Trace) { o.send(PipeMsg{Run: o.Run, Trace: t, Record: o.Record}) }

// Outage shows, in the status line, that a server is not answering and the
// pipeline is retrying; Recovered says it answers again.
func (o Observer) Outage(out ingest.Outage) {
	o.send(ObservedMsg{StatusMsg{"outage: " + out.String(), true}})
}

// Notice puts text in the status line (a follower's side work failing).
func (o Observer) Notice(text string, isErr bool) { o.send(ObservedMsg{StatusMsg{text, isErr}}) }

// Recovered shows in the status line that stage s's server answers again.
func (o Observer) Recovered(s ingest.Stage) {
	o.send(ObservedMsg{StatusMsg{s.String() + ": server answering again, resuming", false}})
}

var _ ingest.Observer = Observer{}
