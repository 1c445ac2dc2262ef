package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/stream"
)

// rowOf is the screen line holding s.
func rowOf(t *testing.T, screen, s string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line holds %q:\n%s", s, screen)
	return ""
}

// Stream columns are sized to their content and the width: the turn
// column still tells rows apart at 80, the summary gets the room at 120,
// an older row shows its time, and ←/→ scroll the summary.
func TestStreamColumnsFitContent(t *testing.T) {
	r, a := world(9, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	s := screen(m)
	if a, b := rowOf(t, s, "step 2 of turn 2"), rowOf(t, s, "step 2 of turn 1"); !strings.Contains(a, "0002") || !strings.Contains(b, "0001") {
		t.Fatalf("at 80 the turn column does not tell the turns apart:\n%s\n%s", a, b)
	}
	// Older than today: the date and the minute (the clock is 12:00 on 05-08).
	r2, a2 := world(3, testBase.AddDate(0, 0, -2))
	m2 := newTestModel(t, testDeps(r2, a2), testOpts(t), 80, 24)
	mustContain(t, rowOf(t, screen(m2), "step 2 of turn 0"), "10:00")

	m3 := newTestModel(t, testDeps(r, a), testOpts(t), 120, 24)
	head := rowOf(t, screen(m3), "summary")
	if w := strings.Index(head, "imp") - strings.Index(head, "summary"); w < 55 {
		t.Fatalf("at 120 the summary gets %d cells:\n%s", w, head)
	}

	m4 := newTestModel(t, testDeps(r, a), testOpts(t), 60, 24)
	press(t, m4, "right")
	mustContain(t, screen(m4), "… look at th", "summary from cell 17")
	// At 60 the turn column stays (the importance bar goes first).
	if row := rowOf(t, screen(m4), "0002"); !strings.Contains(row, "tu…0002") || strings.Contains(rowOf(t, screen(m4), "summary"), "imp") {
		t.Fatalf("at 60 the turn column is not kept before the importance bar:\n%s", screen(m4))
	}
	press(t, m4, "left")
	mustContain(t, screen(m4), "step 2 of t")
}

// The mouse is not captured unless asked for (--mouse), so the terminal's
// own text selection works; with it, a click selects a row or a tab.
func TestMouseOffByDefaultClicksWhenOn(t *testing.T) {
	r, a := world(9, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	if mode := m.View().MouseMode; mode != tea.MouseModeNone {
		t.Fatalf("mouse mode %v by default, want none", mode)
	}
	o := testOpts(t)
	o.Mouse = true
	m = newTestModel(t, testDeps(r, a), o, 100, 24)
	if m.View().MouseMode == tea.MouseModeNone {
		t.Fatal("--mouse did not capture the mouse")
	}
	send(t, m, tea.MouseClickMsg{X: 10, Y: 4, Button: tea.MouseLeft}) // the third row
	if d := m.stream.Selected(); d == nil || d.EventID != "ev-000006" {
		t.Fatalf("a click on the third row selects %v", d)
	}
	x := strings.Index(strings.Split(screen(m), "\n")[0], "Turns")
	send(t, m, tea.MouseClickMsg{X: x + 1, Y: 0, Button: tea.MouseLeft})
	if m.focus != viewTurns {
		t.Fatalf("a click on the Turns tab: focus %v", m.focus)
	}
}

// G (end) with a small buffer (--buffer 20) shows the oldest loaded row at the bottom
// of the screen, the rows above it filling the screen, as vim's G does.
func TestEndWithSmallBufferFillsTheScreen(t *testing.T) {
	r, a := world(700, testBase)
	o := testOpts(t)
	o.BufferRows, o.PageSize = 20, 200 // --buffer 20
	m := newTestModel(t, testDeps(r, a), o, 100, 24)
	addEvents(r, a, 700, 2) // the head page grows by what the tail brings
	send(t, m, stream.TickMsg{})
	for range 3 {
		press(t, m, "G")
		sel, top := m.stream.Selection(), m.stream.Top()
		if sel-top != m.stream.RowsShown()-1 {
			t.Fatalf("after G: selection %d drawn on screen line %d of %d, with rows above it hidden", sel, sel-top, m.stream.RowsShown())
		}
	}
}

// ctrl+d and ctrl+u move half a page; where g starts no chord (the turns,
// the pipeline) a bare g goes to the top at once.
func TestHalfPagesAndBareG(t *testing.T) {
	r, a := world(90, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	half := m.stream.RowsShown() / 2
	press(t, m, "ctrl+d")
	if got := m.stream.Selection(); got != half {
		t.Fatalf("ctrl+d: row %d, want %d", got, half)
	}
	press(t, m, "ctrl+u")
	if got := m.stream.Selection(); got != 0 {
		t.Fatalf("ctrl+u: row %d, want 0", got)
	}
	press(t, m, "tab", "ctrl+d", "ctrl+d", "g")
	if m.chord != "" {
		t.Fatal("g in the turns waits for a second key")
	}
	if _, sel := m.turns.Position(); sel != 0 {
		t.Fatalf("g in the turns: row %d, want the top", sel)
	}
	press(t, m, "?")
	mustContain(t, screen(m), "ctrl+d/u", "half page", "top")
}

// Tabs too wide for the header give way on the left, not on the focused
// tab's side: Similar, opened last, shows by its name, and a click on a
// tab still lands on the one drawn there.
func TestHeaderKeepsTheFocusedTab(t *testing.T) {
	r, a := world(10, testBase)
	d := testDeps(r, a)
	d.Recorder = PipelineRecorder{}
	o := testOpts(t)
	o.Mouse = true
	m := newTestModel(t, d, o, 60, 24)
	press(t, m, "down", "enter", "S")
	if m.focus != viewSimilar {
		t.Fatalf("focus %v", m.focus)
	}
	head := strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.HasPrefix(head, "…") || !strings.Contains(head, " Similar ") {
		t.Fatalf("header: %q", head)
	}
	x := strings.Index(head, "Pipeline")
	if x < 0 {
		t.Fatalf("no Pipeline tab: %q", head)
	}
	send(t, m, tea.MouseClickMsg{X: len([]rune(head[:x])) + 1, Y: 0, Button: tea.MouseLeft})
	if m.focus != viewPipeline {
		t.Fatalf("a click on the Pipeline tab: focus %v", m.focus)
	}
	head = strings.SplitN(screen(m), "\n", 2)[0]
	if !strings.HasPrefix(head, " Stream ") {
		t.Fatalf("an early tab focused: the first tabs show again: %q", head)
	}
}

// A narrow window cuts the agent column in the middle, as the turn's:
// agent ids share their start, and "agent…" would hide which one it is.
func TestNarrowAgentColumnKeepsTheEnd(t *testing.T) {
	r, a := world(0, testBase)
	for i, agent := range []string{"agent-alpha", "agent-beta"} {
		ev := testEvent(i, testBase.Add(time.Duration(i)*time.Second))
		ev.Context.AgentID = agent
		ev.Context.TurnID = fmt.Sprintf("turn-%06d", i)
		r.add(model.NewIndexDoc(ev, 0))
	}
	m := newTestModel(t, testDeps(r, a), testOpts(t), 60, 24)
	s := screen(m)
	if row := rowOf(t, s, "step 1"); !strings.Contains(row, "…beta") {
		t.Fatalf("at 60 the agent column does not tell the agents apart:\n%s", s)
	}
	if row := rowOf(t, s, "step 0"); !strings.Contains(row, "…lpha") {
		t.Fatalf("at 60 the agent column does not tell the agents apart:\n%s", s)
	}
}
