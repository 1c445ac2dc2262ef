package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"engram/ingest"
	"engram/themes"
	"engram/ui/uikit"
)

func newModel() *Model {
	c := &uikit.Common{Styles: uikit.NewStyles(themes.Dark()), Keys: uikit.DefaultKeyMap()}
	c.Deps.Now = time.Now
	v := New(c)
	v.SetSize(100, 30)
	return v
}

func trace(seq uint64, id string, outcome ingest.Outcome) uikit.PipeMsg {
	t := &ingest.Trace{Seq: seq, EventID: id, Src: ingest.Source{File: "f.jsonl", Line: int(seq)}, Outcome: outcome}
	if outcome == ingest.OutcomeFailed {
		t.Err = errors.New("index down")
	}
	return uikit.PipeMsg{Run: 1, Trace: t}
}

func TestFailuresFirstThenTheNewest(t *testing.T) {
	v := newModel()
	v.Update(trace(1, "ev-a", ingest.OutcomeIngested))
	v.Update(trace(2, "ev-b", ingest.OutcomeFailed))
	v.Update(trace(3, "ev-c", ingest.OutcomeIngested))
	v.Update(uikit.PipeMsg{Run: 1, Stage: &ingest.StageEvent{Seq: 4, EventID: "ev-d",
		StageRecord: ingest.StageRecord{Stage: ingest.StageIndex, Status: ingest.StatusRunning}}})
	if v.Runs() != 4 || !v.Busy() {
		t.Fatalf("%d runs, busy %v: want 4, one still running", v.Runs(), v.Busy())
	}
	lines := strings.Split(ansi.Strip(v.View()), "\n")
	for i, want := range []string{"ev-b", "ev-d", "ev-c", "ev-a"} {
		if !strings.Contains(lines[i], want) {
			t.Fatalf("line %d is %q, want %s:\n%s", i, lines[i], want, strings.Join(lines, "\n"))
		}
	}
}
