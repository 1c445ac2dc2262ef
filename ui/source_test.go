package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// sourceReader is an index the source system wrote: its documents lack
// engram's extension fields (so every turn of the index is one event) and
// it says so through Coverage, as osindex does.
type sourceReader struct{ *memReader }

func (r sourceReader) Coverage(context.Context) (query.Coverage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := query.Coverage{Total: int64(len(r.docs)), Lacking: map[string]int64{}, At: testNow}
	for _, d := range r.docs {
		if d.IngestedAt != "" {
			continue
		}
		c.Plain++
		for f, has := range map[string]bool{"tool": d.Tool != "", "success": d.Success != nil, "latency_ms": d.LatencyMs != nil,
			"tenant_id": d.TenantID != "", "trace_id": d.TraceID != "", "turn_id": d.TurnID != ""} {
			if !has {
				c.Lacking[f]++
			}
		}
	}
	return c, nil
}

// sourceShaped is a document as the source system's worker indexes it:
// none of the extension fields.
func sourceShaped(d *model.IndexDoc) *model.IndexDoc {
	c := *d
	c.TurnID, c.TraceID, c.TenantID, c.Tool, c.IngestedAt = "", "", "", "", ""
	c.Success, c.LatencyMs = nil, nil
	return &c
}

// sourceWorld is world's events, their full events archived and their
// documents source-shaped, read as the inspector reads such an index
// (query.TurnReader, as cli opens it).
func sourceWorld(n int) (uikit.Reader, *memReader, *memArchive) {
	full, a := world(n, testBase)
	src := &memReader{}
	for _, d := range full.docs {
		src.add(sourceShaped(d))
	}
	r := sourceReader{src}
	return query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: a}}, src, a
}

// TestGoldenSource: the header marks a source-written index, the status
// line warns on a filter over a missing field, the Turns view lists the
// archive's turns (three events each, not one), a turn's chain and an
// event's detail say they came from the archive, and the help says what
// works there.
func TestGoldenSource(t *testing.T) {
	scenes := []struct {
		name  string
		setup func(t *testing.T, m *Model)
	}{
		{"source_stream", func(t *testing.T, m *Model) { press(t, m, "down") }},
		{"source_warning", func(t *testing.T, m *Model) {
			press(t, m, "/")
			typeText(t, m, "tool:shell")
			press(t, m, "enter")
		}},
		{"source_turns", func(t *testing.T, m *Model) { press(t, m, "tab", "down") }},
		{"source_chain", func(t *testing.T, m *Model) { press(t, m, "tab", "down", "enter", "down") }},
		{"source_detail", func(t *testing.T, m *Model) { press(t, m, "down", "enter") }},
		{"source_help", func(t *testing.T, m *Model) { press(t, m, "?") }},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, sc := range scenes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				r, _, a := sourceWorld(15)
				m := newTestModel(t, testDeps(r, a), testOpts(t), size[0], size[1])
				sc.setup(t, m)
				golden.RequireEqual(t, []byte(ansi.Strip(m.View().Content)))
			})
		}
	}
}

func TestSourceIndexHeaderAndWarning(t *testing.T) {
	r, _, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	mustContain(t, screen(m), "⚠ source-written")
	press(t, m, "/")
	typeText(t, m, "tool:shell")
	press(t, m, "enter")
	mustContain(t, screen(m), "tool: 15 of 15 documents have no tool field — written without engram's extensions; see engram reindex --into")
	press(t, m, "j") // a key clears a status, not the warning: it holds while the filter does
	mustContain(t, screen(m), "tool: 15 of 15 documents")
	press(t, m, "esc") // the filter gone, the warning too
	mustNotContain(t, screen(m), "documents have no")
	// A filter on the source system's own fields does not warn.
	press(t, m, "/")
	typeText(t, m, "type:tool_result")
	press(t, m, "enter")
	mustNotContain(t, screen(m), "documents have no")

	// An engram-written index: no mark, no warning.
	full, fa := world(15, testBase)
	m = newTestModel(t, testDeps(sourceReader{full}, fa), testOpts(t), 120, 30)
	for _, d := range full.docs {
		d.IngestedAt = "2026-05-08T10:00:00Z"
	}
	send(t, m, coverageTickMsg{})
	press(t, m, "/")
	typeText(t, m, "tool:shell")
	press(t, m, "enter")
	mustNotContain(t, screen(m), "source-written", "documents have no")
}

func TestSourceTurnsFromTheArchive(t *testing.T) {
	r, _, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	press(t, m, "tab")
	rows := m.turns.Rows()
	if rows.Len() != 5 {
		t.Fatalf("%d turns, want the archive's 5 of three events", rows.Len())
	}
	for i := range rows.Len() {
		if tr := rows.Row(i); tr.Events != 3 || !strings.HasPrefix(tr.Key, "turn-") {
			t.Errorf("row %d: %+v", i, tr)
		}
	}
	if !strings.Contains(m.turns.Note(), "from the archive") {
		t.Errorf("note %q", m.turns.Note())
	}
	press(t, m, "enter")
	steps, open := m.turns.Chain()
	if !open || len(steps) != 3 || steps[1].Tool != "shell" || steps[2].Success == nil {
		t.Fatalf("chain: open %v, %d steps", open, len(steps))
	}
	mustContain(t, screen(m), "from the archive", "observation → action → outcome")
	// A step's detail (the document filled in from the archive) names the
	// archive's turn too.
	press(t, m, "down", "enter")
	mustContain(t, screen(m), "turn turn-0004 from the archive · step 2 of 3", "tool shell")
}

// TestSourceTurnsLeavingCancels: a listing from the archive still reading
// stops when the Turns view is left, and is listed again when it is shown.
func TestSourceTurnsLeavingCancels(t *testing.T) {
	r, _, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	a.mu.Lock()
	a.block = true
	a.mu.Unlock()
	press(t, m, "tab")
	if !m.turns.Busy() {
		t.Fatal("the turns are not loading")
	}
	press(t, m, "tab") // to the detail
	waitFor(t, func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.cancelled > 0 })
	if m.turns.Busy() {
		t.Error("still loading after the view was left")
	}
	a.mu.Lock()
	a.block = false
	a.mu.Unlock()
	press(t, m, "esc", "tab") // stream, then turns again
	if m.turns.Rows().Len() != 5 {
		t.Errorf("shown again: %d turns", m.turns.Rows().Len())
	}
}

func TestSourceDetailChain(t *testing.T) {
	r, _, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	press(t, m, "down", "enter") // ev-000013: the action of turn-0004
	mustContain(t, screen(m), "turn turn-0004 from the archive · step 2 of 3: ○ observation → ▸ action → ◆ outcome")
	press(t, m, "]") // the next event in the stream: the observation
	mustContain(t, screen(m), "step 1 of 3")

	// An engram-written document needs no archive search.
	full, fa := world(6, testBase)
	m = newTestModel(t, testDeps(query.TurnReader{Reader: sourceReader{full}, Archived: &query.ArchiveTurns{Reader: sourceReader{full}, Archive: fa}}, fa), testOpts(t), 120, 30)
	for _, d := range full.docs {
		d.IngestedAt = "2026-05-08T10:00:00Z"
	}
	press(t, m, "enter")
	mustNotContain(t, screen(m), "from the archive")
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// TestSourceFlow drives a real program (teatest) over a source-written
// index: the header's mark, the warning of a filter on a missing field,
// then the Turns view grouped by the archive's turns and a chain.
func TestSourceFlow(t *testing.T) {
	r, _, a := sourceWorld(15)
	tm, p := flow(t, testDeps(r, a))
	waitScreen(t, p, "the header's mark", has("⚠ source-written", "ev-000014"))
	tm.Send(keyMsg("/"))
	tm.Type("tool:kubectl")
	tm.Send(keyMsg("enter"))
	waitScreen(t, p, "the warning", has("tool: 15 of 15 documents have no tool field"))
	tm.Send(keyMsg("esc"))
	waitScreen(t, p, "the filter cleared", func(s string) bool { return !strings.Contains(s, "documents have no") })
	tm.Send(keyMsg("tab"))
	waitScreen(t, p, "the archive's turns", has("turn-0004", "turns from the archive", "turn 1 of 5 loaded"))
	tm.Send(keyMsg("enter"))
	waitScreen(t, p, "the chain", has("3 events · observation → action → outcome · from the archive"))
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// TestHeaderMarkNeverCutsTheTabs: the header drops the count before the
// tabs give way (seen in tmux at 80 columns, paused: the right part fitted
// to the cell with no space left, so "Pipeline" was cut).
func TestHeaderMarkNeverCutsTheTabs(t *testing.T) {
	r, _, a := sourceWorld(15)
	d := testDeps(r, a)
	o := testOpts(t)
	o.ReadOnly = true
	m := newTestModel(t, d, o, 80, 24)
	m.count = 900
	press(t, m, "tab", "space")
	head := strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.Contains(head, "Pipeline  Overview ") || !strings.Contains(head, "read-only · ‖ paused") {
		t.Errorf("header: %q", head)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	head = strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.Contains(head, "⚠ source-written · read-only · ‖ paused") {
		t.Errorf("header at 120 columns: %q", head)
	}
}

// TestSourceTurnByKeySaysWhatWorks: :turn with a turnId the index cannot
// look up says why, whole (wrapped), and what to do instead. The turnId is
// one no archived event carries: turn-0001, which one does, was shown
// from the archive whenever a background read of the archive had found its
// turn first (ArchiveTurns remembers it; 1 run in 3 under -race at the
// base, CI included), and a turn found is rightly shown.
func TestSourceTurnByKeySaysWhatWorks(t *testing.T) {
	r, _, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, ":")
	typeText(t, m, "turn turn-9999")
	press(t, m, "enter")
	mustContain(t, screen(m), "no turn key", "its detail shows the chain")
}

// TestSourceMarkPartial: once engram's worker writes to the index, the
// mark counts the documents still without the extensions, on the next
// refresh.
func TestSourceMarkPartial(t *testing.T) {
	r, src, a := sourceWorld(15)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	d := model.NewIndexDoc(testEvent(15, testBase), 0)
	d.IngestedAt = "2026-05-08T11:00:00Z"
	src.add(d)
	mustContain(t, screen(m), "⚠ source-written")
	send(t, m, coverageTickMsg{})
	mustContain(t, screen(m), "⚠ 15 of 16 source-written")
}

// TestHeaderMarkShortensBeforeItGoes: with the Record tab at 80 columns
// the mark is shortened rather than dropped (seen in tmux).
func TestHeaderMarkShortensBeforeItGoes(t *testing.T) {
	r, _, a := sourceWorld(15)
	d := testDeps(r, a)
	d.Recorder = PipelineRecorder{}
	m := newTestModel(t, d, testOpts(t), 80, 24)
	head := strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.Contains(head, "Record  Pipeline ") || !strings.Contains(head, "⚠ src-written · ● following") {
		t.Errorf("header: %q", head)
	}
}
