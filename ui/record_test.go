package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/ingest/embed"
	"engram/model"
	"engram/ui/stream"
	"engram/ui/uikit"
)

// recorderFor is the real pipeline writing into the fakes.
func recorderFor(r *memReader, a *memArchive) uikit.Recorder {
	return PipelineRecorder{Config: ingest.Config{
		Archive: memStore{a}, Index: memIndex{r}, Embedder: embed.Stub{}, BatchWait: 1,
	}}
}

func recordModel(t *testing.T, n int) (*Model, *memReader, *memArchive) {
	t.Helper()
	r, a := world(n, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	return newTestModel(t, d, testOpts(t), 100, 30), r, a
}

func TestRecordValidatesAsYouType(t *testing.T) {
	m, _, _ := recordModel(t, 3)
	press(t, m, "R")
	if m.focus != viewRecord {
		t.Fatal("R did not open the form")
	}
	mustNotContain(t, screen(m), "✗ required")
	typeText(t, m, "s")
	press(t, m, "backspace")
	mustContain(t, screen(m), "✗ required")
	press(t, m, "down", "down", "down", "down")
	typeText(t, m, "x")
	press(t, m, "down", "down", "down", "down", "down", "down", "down") // to the reward
	typeText(t, m, "1.5")
	s := screen(m)
	mustContain(t, s, "1.5 is outside [0, 1]")
	press(t, m, "ctrl+s")
	mustContain(t, screen(m), "the event is not valid")
	if f := m.record.FocusedField(); f != "session" {
		t.Fatalf("focus on field %q after a bad submit, want the session", f)
	}
}

func TestRecordRunsPipelineAndSelectsEvent(t *testing.T) {
	m, r, _ := recordModel(t, 3)
	press(t, m, "R")
	typeText(t, m, "sess-1")
	press(t, m, "down")
	typeText(t, m, "turn-x")
	press(t, m, "down", "down", "down")
	typeText(t, m, "what the user said")
	press(t, m, "ctrl+s")
	// The stages were drawn as they ran (the listener delivers them).
	mustContain(t, screen(m), "✓ receive", "✓ archive", "✓ index", "ingested in")
	if n, _ := r.Count(m.c.Ctx); n != 4 {
		t.Fatalf("%d docs after recording, want 4", n)
	}
	send(t, m, stream.TickMsg{})
	press(t, m, "esc")
	if d := m.stream.Selected(); d == nil || d.EventID != "new-001" {
		t.Fatalf("stream selects %v, want the recorded new-001", d)
	}
	// The pipeline view has its waterfall.
	press(t, m, "tab", "tab", "tab") // Tab skips the Record form
	if m.focus != viewPipeline {
		t.Fatalf("focus %v", m.focus)
	}
	mustContain(t, screen(m), "ingested", "new-001", "receive", "archive", "slowest")
}

func TestDuplicateAsNew(t *testing.T) {
	m, _, _ := recordModel(t, 9)
	press(t, m, "down", "enter") // ev-000007, an action with reasoning
	press(t, m, "D")
	if m.focus != viewRecord {
		t.Fatal("D did not open the form")
	}
	f := m.record
	if f.Value("reasoning") == "" || f.Value("tool") != "shell" || f.Value("session") != "s-0" {
		t.Fatalf("form not filled from the archived event: tool %q reasoning %q", f.Value("tool"), f.Value("reasoning"))
	}
	press(t, m, "ctrl+s")
	if m.record.Recording() != "new-001" {
		t.Fatal("the copy was not recorded under a fresh id")
	}
}

func TestReadOnlyHidesWrites(t *testing.T) {
	r, a := world(3, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	o := testOpts(t)
	o.ReadOnly = true
	m := newTestModel(t, d, o, 100, 30)
	s := screen(m)
	mustNotContain(t, s, "Record")
	press(t, m, "R", "D", "e")
	if m.focus != viewStream {
		t.Fatalf("read-only: a write key moved focus to %v", m.focus)
	}
	press(t, m, "?")
	mustNotContain(t, screen(m), "record event", "duplicate", "export")
}

func TestRecordFormNarrow(t *testing.T) {
	m, _, _ := recordModel(t, 1)
	send(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "R")
	for i, l := range strings.Split(screen(m), "\n") {
		if uikit.Width(l) > 80 {
			t.Fatalf("line %d too wide: %q", i, l)
		}
	}
	press(t, m, "up") // to the type: ←/→ changes it
	press(t, m, "right")
	if typ := m.record.Value("type"); typ != model.EventTypes[1] {
		t.Fatalf("type %s after →, want the second", typ)
	}
}

// recordOne fills the form's required fields and records the event.
func recordOne(t *testing.T, m *Model) {
	t.Helper()
	press(t, m, "R")
	typeText(t, m, "sess-1")
	press(t, m, "down", "down", "down", "down")
	typeText(t, m, "what the user said")
	press(t, m, "ctrl+s")
}

// The form says the recorded event is "selected in the stream": it is,
// and stays so while more events arrive, following or paused.
func TestRecordedEventStaysSelected(t *testing.T) {
	for _, paused := range []bool{false, true} {
		m, r, a := recordModel(t, 3)
		if paused {
			press(t, m, "space")
		}
		recordOne(t, m)
		send(t, m, stream.TickMsg{}) // the tail brings it alone
		addEvents(r, a, 3, 4)        // the agent goes on: these come after it
		send(t, m, stream.TickMsg{})
		press(t, m, "esc")
		addEvents(r, a, 7, 2)
		send(t, m, stream.TickMsg{})
		if d := m.stream.Selected(); d == nil || d.EventID != "new-001" {
			t.Fatalf("paused %v: the stream selects %v, want the recorded new-001", paused, d)
		}
		mustContain(t, screen(m), "what the user said") // on screen, not among "N new"
	}
}

// D from a list copies the archived event, not only what the index
// holds: output, reward, error code and trace id come along.
func TestDuplicateCarriesEveryFormField(t *testing.T) {
	r, a := world(3, testBase)
	ev := testEvent(3, testBase)
	ev.Type = model.TypeToolResult
	ev.Result = &model.Result{Output: "freed 2 GB", ErrorCode: "ENOSPC"}
	ev.Evaluation = &model.Evaluation{RewardScore: 0.25, SelfAssessedQuality: 0.25}
	ev.Context.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	m := newTestModel(t, d, testOpts(t), 100, 30)
	press(t, m, "D") // on the stream's newest row: the archive is not at hand
	f := m.record
	for label, want := range map[string]string{"output": "freed 2 GB", "reward": "0.25", "error code": "ENOSPC", "trace id": ev.Context.TraceID} {
		if got := f.Value(label); got != want {
			t.Errorf("duplicate's %s = %q, want %q", label, got, want)
		}
	}
	press(t, m, "ctrl+s")
	obj, err := a.Get(m.c.Ctx, "events/2026/05/08/new-001.json", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(obj.Body); !strings.Contains(s, `"errorCode":"ENOSPC"`) || !strings.Contains(s, ev.Context.TraceID) {
		t.Fatalf("recorded copy lacks the error code or trace id: %s", s)
	}
}

// The form keeps to form conventions: Tab and shift+Tab move between
// fields, F1 opens the help (? and q are text), ctrl+r clears the form,
// and a second ctrl+s asks before recording the same event again.
func TestRecordFormConventions(t *testing.T) {
	m, r, _ := recordModel(t, 3)
	press(t, m, "R", "tab")
	if m.focus != viewRecord || m.record.FocusedField() != "turn" {
		t.Fatalf("tab: view %v field %q, want the form's next field", m.focus, m.record.FocusedField())
	}
	press(t, m, "shift+tab")
	if m.record.FocusedField() != "session" {
		t.Fatalf("shift+tab: field %q, want the session", m.record.FocusedField())
	}
	typeText(t, m, "q?")
	if m.record.Value("session") != "q?" || m.showHelp {
		t.Fatalf("q and ? are text in a field: session %q, help %v", m.record.Value("session"), m.showHelp)
	}
	send(t, m, tea.KeyPressMsg{Code: tea.KeyF1})
	mustContain(t, screen(m), "Keys · Record", "clear the form")
	press(t, m, "esc") // closes the help
	press(t, m, "down", "down", "down", "down")
	typeText(t, m, "said")
	press(t, m, "ctrl+s")
	press(t, m, "ctrl+s")
	if n, _ := r.Count(m.c.Ctx); n != 4 {
		t.Fatalf("%d docs after a second ctrl+s, want 4: it asks first", n)
	}
	mustContain(t, screen(m), "already recorded")
	press(t, m, "ctrl+s")
	if n, _ := r.Count(m.c.Ctx); n != 5 {
		t.Fatalf("%d docs after ctrl+s twice more, want 5", n)
	}
	send(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if m.record.Value("session") != "" || m.record.Value("input text") != "" {
		t.Fatal("ctrl+r did not clear the form")
	}
}

// ctrl+r clears the form and the stage trace beside it.
func TestRecordResetClearsTheTrace(t *testing.T) {
	m, _, _ := recordModel(t, 3)
	press(t, m, "R")
	typeText(t, m, "sess-1")
	press(t, m, "down", "down", "down", "down")
	typeText(t, m, "what the user said")
	press(t, m, "ctrl+s")
	mustContain(t, screen(m), "✓ archive", "ingested in")
	press(t, m, "ctrl+r")
	s := screen(m)
	mustContain(t, s, "the form and its trace are cleared")
	mustNotContain(t, s, "✓ archive", "ingested in", "what the user said")
}
