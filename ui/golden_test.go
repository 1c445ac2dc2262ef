package ui

import (
	"errors"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"engram/ingest"
	"engram/model"
	"engram/ui/stream"
	"engram/ui/uikit"
)

// goldenWorld is the data every snapshot shows: turns of three phases,
// a failure, wide characters.
func goldenWorld() (*memReader, *memArchive) {
	r, a := world(14, testBase)
	ev := testEvent(14, testBase)
	ev.Input.Text = "ユーザーが質問: 🚀 launch the build and report"
	ev.Context.AgentID = "エージェント"
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	return r, a
}

// fixedTrace is a pipeline trace with set durations (real ones vary).
func fixedTrace(seq uint64, id string, failAt ingest.Stage) *ingest.Trace {
	start := testNow.Add(-time.Minute)
	t := &ingest.Trace{Seq: seq, EventID: id, Src: ingest.Source{File: "/var/log/agent/events.jsonl", Line: int(seq)}, Start: start, Outcome: ingest.OutcomeIngested}
	at := time.Duration(0)
	for i := range ingest.NumStages {
		d := time.Duration(100*(int(i)+1)) * time.Microsecond
		if i == ingest.StageArchive {
			d = 4 * time.Millisecond
		}
		t.Stages[i] = ingest.StageRecord{Stage: i, Status: ingest.StatusDone, Start: start.Add(at), Duration: d}
		if failAt >= 0 && i == failAt {
			t.Stages[i].Status, t.Stages[i].Err = ingest.StatusFailed, errors.New("disk full")
			t.Outcome, t.Err = ingest.OutcomeFailed, t.Stages[i].Err
		}
		if failAt >= 0 && i > failAt {
			t.Stages[i] = ingest.StageRecord{Stage: i, Status: ingest.StatusSkipped}
		}
		at += d
	}
	t.Total = at
	return t
}

func TestGolden(t *testing.T) {
	scenes := []struct {
		name  string
		setup func(t *testing.T, m *Model)
		deps  func(d *uikit.Deps)
	}{
		{"stream", func(t *testing.T, m *Model) { press(t, m, "down", "down") }, nil},
		{"stream_paused", func(t *testing.T, m *Model) {
			press(t, m, "space")
			r := m.c.Deps.Reader.(*memReader)
			addEvents(r, &memArchive{}, 15, 5)
			send(t, m, stream.TickMsg{})
		}, nil},
		{"detail", func(t *testing.T, m *Model) { press(t, m, "down", "enter") }, nil},
		{"detail_side", func(t *testing.T, m *Model) { press(t, m, "down", "down", "enter", "s") }, nil},
		{"detail_search", func(t *testing.T, m *Model) {
			press(t, m, "down", "enter", "/")
			typeText(t, m, "disk")
		}, nil},
		{"turns", func(t *testing.T, m *Model) { press(t, m, "tab", "down") }, nil},
		{"chain", func(t *testing.T, m *Model) { press(t, m, "tab", "down", "enter", "down") }, nil},
		{"record", func(t *testing.T, m *Model) {
			press(t, m, "R")
			typeText(t, m, "s")
			press(t, m, "backspace", "down", "down", "down", "down", "down", "down", "down", "down", "down")
			typeText(t, m, "slow")
		}, func(d *uikit.Deps) { d.Recorder = PipelineRecorder{} }},
		{"pipeline", func(t *testing.T, m *Model) {
			send(t, m, uikit.PipeMsg{Run: 1, Trace: fixedTrace(1, "ev-a", -1)})
			send(t, m, uikit.PipeMsg{Run: 1, Trace: fixedTrace(2, "ev-b", ingest.StageArchive)})
			send(t, m, uikit.PipeMsg{Run: 1, Trace: fixedTrace(3, "ev-c", -1)})
			press(t, m, "tab", "tab", "tab", "down")
		}, nil},
		{"help", func(t *testing.T, m *Model) { press(t, m, "?") }, nil},
		{"filter_error", func(t *testing.T, m *Model) {
			press(t, m, "/")
			typeText(t, m, "agent:coder colour:red")
			press(t, m, "enter")
		}, nil},
		{"empty", nil, func(d *uikit.Deps) { d.Reader, d.Archive = &memReader{}, &memArchive{} }},
		{"fatal", nil, func(d *uikit.Deps) {
			d.Err = fmt.Errorf("open index /data/engram/index.db: database disk image is malformed")
			d.Hint = "Move the damaged index aside and rebuild it from the archive, or point --data at another directory."
		}},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				r, a := goldenWorld()
				d := testDeps(r, a)
				if sc.deps != nil {
					sc.deps(&d)
				}
				m := newTestModel(t, d, testOpts(t), size[0], size[1])
				if sc.setup != nil {
					sc.setup(t, m)
				}
				out := ansi.Strip(m.View().Content)
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

var _ tea.Model = (*Model)(nil)
