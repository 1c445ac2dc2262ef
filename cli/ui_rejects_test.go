package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/ingest"
	"engram/ui"
)

type doneRecorder struct{ done []*ingest.Trace }

func (d *doneRecorder) Stage(ingest.StageEvent) {}
func (d *doneRecorder) Done(t *ingest.Trace)    { d.done = append(d.done, t) }

// --follow in the inspector keeps its rejected lines in <data>/rejects/,
// as engram ingest does, and still reports every trace to the inspector.
func TestFollowKeepsRejects(t *testing.T) {
	data := t.TempDir()
	r := newRejectingRecorder(ui.PipelineRecorder{}, data)
	inner := &doneRecorder{}
	obs := rejectObserver{inner, r.rejects}
	obs.Done(&ingest.Trace{Outcome: ingest.OutcomeIngested, Src: ingest.Source{File: "a.jsonl", Line: 1}})
	obs.Done(&ingest.Trace{Outcome: ingest.OutcomeRejected, Src: ingest.Source{File: "a.jsonl", Line: 2}, Input: []byte(`{"eventId":"bad"}`)})
	r.rejects.Close()
	files, _ := filepath.Glob(filepath.Join(data, "rejects", "*.jsonl"))
	if len(files) != 1 || len(inner.done) != 2 {
		t.Fatalf("rejects files %v, traces passed on %d", files, len(inner.done))
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), `a.jsonl:2`) || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("rejects file holds %s", b)
	}
}
