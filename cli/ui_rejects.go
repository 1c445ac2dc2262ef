package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"engram/ingest"
	"engram/ingest/publish"
	"engram/ui/uikit"
)

// rejectingRecorder is the inspector's pipeline keeping the lines --follow
// rejects in <data>/rejects/, verbatim with their reasons, as engram ingest
// does. The record form's events are checked as they are typed and are not
// kept there.
type rejectingRecorder struct {
	uikit.Recorder
	rejects *publish.Rejects
}

func newRejectingRecorder(p uikit.Recorder, data string) rejectingRecorder {
	name := time.Now().UTC().Format("20060102T150405.000Z") + "-follow.jsonl"
	return rejectingRecorder{p, publish.NewRejects(filepath.Join(data, "rejects", name))}
}

// Ingest runs a followed file's lines, keeping the rejected ones.
func (r rejectingRecorder) Ingest(ctx context.Context, items <-chan ingest.Item, obs ingest.Observer) ingest.Summary {
	return r.Recorder.Ingest(ctx, items, rejectObserver{obs, r.rejects})
}

// rejectObserver writes rejected traces to rejects, then tells obs. It
// passes outages on, so the inspector still hears of them.
type rejectObserver struct {
	ingest.Observer
	rejects *publish.Rejects
}

func (o rejectObserver) Done(t *ingest.Trace) {
	if t.Outcome == ingest.OutcomeRejected {
		if err := o.rejects.Add(t); err != nil {
			o.notice(fmt.Sprintf("writing rejects to %s: %v", o.rejects.Path(), err))
		}
	}
	o.Observer.Done(t)
}

// notice puts text in the inspector's status line, when obs can.
func (o rejectObserver) notice(text string) {
	if n, ok := o.Observer.(interface{ Notice(string, bool) }); ok {
		n.Notice(text, true)
	}
}

func (o rejectObserver) Outage(out ingest.Outage) {
	if oo, ok := o.Observer.(ingest.OutageObserver); ok {
		oo.Outage(out)
	}
}

func (o rejectObserver) Recovered(s ingest.Stage) {
	if oo, ok := o.Observer.(ingest.OutageObserver); ok {
		oo.Recovered(s)
	}
}

var _ ingest.OutageObserver = rejectObserver{}
