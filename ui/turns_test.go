package ui

import (
	"strings"
	"testing"

	"engram/model"
	"engram/ui/stream"
)

func TestTurnsListAndChain(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "tab")
	if m.focus != viewTurns || m.turns.Rows().Len() != 4 {
		t.Fatalf("focus %v with %d turns, want the turns view with 4", m.focus, m.turns.Rows().Len())
	}
	press(t, m, "down", "enter")
	s := screen(m)
	mustContain(t, s, "turn turn-0002", "3 events", "observation → action → outcome")
	var phases []model.Phase
	steps, _ := m.turns.Chain()
	for _, d := range steps {
		phases = append(phases, d.Phase())
	}
	if len(phases) != 3 || phases[0] != model.PhaseObservation || phases[1] != model.PhaseAction || phases[2] != model.PhaseOutcome {
		t.Fatalf("chain phases %v", phases)
	}
	mustContain(t, s, "tool shell", "✓", "66ms")
	press(t, m, "down", "down", "enter")
	if m.focus != viewDetail || m.detail.Doc().EventID != "ev-000008" {
		t.Fatalf("enter on the outcome opened %v", m.detail.Doc())
	}
	press(t, m, "[")
	if m.detail.Doc().EventID != "ev-000007" {
		t.Fatalf("[ in a chain's detail went to %s, want the action ev-000007", m.detail.Doc().EventID)
	}
	press(t, m, "esc")
	if _, open := m.turns.Chain(); m.focus != viewTurns || !open {
		t.Fatal("esc from the detail did not return to the chain")
	}
	press(t, m, "esc")
	if _, open := m.turns.Chain(); open {
		t.Fatal("esc did not close the chain")
	}
}

// TestTurnsChainInvertedTimestamps: the chain is in causal order even when
// the outcome carries the earliest timestamp (the reader orders it).
func TestTurnsReloadWhenNewEvents(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "tab")
	n := m.turns.Rows().Len()
	press(t, m, "tab")
	addEvents(r, a, 6, 3)
	send(t, m, stream.TickMsg{})
	press(t, m, "shift+tab")
	if m.turns.Rows().Len() != n+1 {
		t.Fatalf("%d turns after a new turn came, want %d", m.turns.Rows().Len(), n+1)
	}
	if !strings.Contains(screen(m), "turn-0002") {
		t.Fatal("new turn not shown")
	}
}

// The header says "● following": the turns follow too, without leaving
// the view; space pauses them (and the stream) and says so in the footer.
func TestTurnsFollowLikeTheStream(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "tab")
	n := m.turns.Rows().Len()
	addEvents(r, a, 6, 3)
	send(t, m, stream.TickMsg{})
	if got := m.turns.Rows().Len(); got != n+1 {
		t.Fatalf("following: %d turns after a new turn came, want %d", got, n+1)
	}
	mustContain(t, screen(m), "space pause")
	press(t, m, "space")
	mustContain(t, screen(m), "‖ paused", "space follow")
	addEvents(r, a, 9, 3)
	send(t, m, stream.TickMsg{})
	if got := m.turns.Rows().Len(); got != n+1 {
		t.Fatalf("paused: %d turns, want them kept at %d", got, n+1)
	}
	press(t, m, "space")
	if got := m.turns.Rows().Len(); got != n+2 || !m.stream.Following() {
		t.Fatalf("resumed: %d turns (following %v), want %d", got, m.stream.Following(), n+2)
	}
}

// The chain names an event's type only when it is not its phase ("○
// observation observation"), and the turns' failure column says what it is.
func TestChainAndTurnsReadPlainly(t *testing.T) {
	r := &memReader{}
	a := &memArchive{}
	for i, typ := range []string{"observation", "action", "outcome"} {
		ev := testEvent(i, testBase)
		ev.Type = typ
		body, _ := ev.ArchiveJSON()
		a.put(ev.ObjectStorageKey, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "tab")
	mustNotContain(t, screen(m), "events ✗")
	mustContain(t, screen(m), "fail")
	press(t, m, "enter")
	mustNotContain(t, screen(m), "observation observation", "action      action", "outcome     outcome")
	mustContain(t, screen(m), "○ observation")
}

// A turn that ended before today shows its date and its minute.
func TestTurnsOlderThanTodayShowTheTime(t *testing.T) {
	r, a := world(6, testBase.AddDate(0, 0, -3))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "tab")
	mustContain(t, screen(m), "05-05 10:00")
}

// A turn of one event says "1 event".
func TestChainOfOneEvent(t *testing.T) {
	r, a := world(1, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "tab", "enter")
	mustContain(t, screen(m), "· 1 event ·")
}

// Following at the top, the selection stays on the newest turn as new
// ones come, as the stream's does; moved down, it stays on the turn it
// was on (a row further down), not on the row index.
func TestTurnsSelectionFollowsTheNewest(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "tab")
	if got := m.turns.SelectedKey(); got != "turn-0001" {
		t.Fatalf("selected %q, want the newest turn-0001", got)
	}
	addEvents(r, a, 6, 3)
	send(t, m, stream.TickMsg{})
	if got := m.turns.SelectedKey(); got != "turn-0002" {
		t.Fatalf("following at the top: selected %q after turn-0002 came, want it", got)
	}
	press(t, m, "down")
	addEvents(r, a, 9, 3)
	send(t, m, stream.TickMsg{})
	if _, sel := m.turns.Position(); m.turns.SelectedKey() != "turn-0001" || sel != 2 {
		t.Fatalf("moved away: selected %q at row %d after turn-0003 came, want turn-0001 at row 2", m.turns.SelectedKey(), sel)
	}
}

// The turns' help and footer name enter the same way: it opens the
// turn's causal chain.
func TestTurnsHelpAndFooterAgreeOnEnter(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	press(t, m, "tab")
	mustContain(t, lastLine(screen(m)), "enter causal chain")
	press(t, m, "?")
	s := screen(m)
	mustContain(t, s, "enter causal chain")
	mustNotContain(t, s, "enter open")
}

// A filter that matches no turn says how to clear it, as the stream does:
// esc goes back to the stream, and esc again clears the filter.
func TestTurnsEmptyFilterSaysHowToClear(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "/")
	typeText(t, m, "agent:nobody")
	press(t, m, "enter", "tab")
	if m.focus != viewTurns {
		t.Fatalf("focus %v, want the turns view", m.focus)
	}
	mustContain(t, screen(m), "no turns match the filter: esc twice clears it", "filter: agent:nobody")
	press(t, m, "esc", "esc")
	if m.filter.applied != "" {
		t.Fatalf("filter %q after esc twice, want none", m.filter.applied)
	}
	press(t, m, "tab")
	mustContain(t, screen(m), "turn 1 of 4 loaded")
}

// An enter before the first page of turns has landed says why nothing
// opens, instead of doing nothing.
func TestTurnsEnterWhileLoadingSaysSo(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	m.Update(keyMsg("tab")) // its load is not run: the turns stay loading
	if m.focus != viewTurns {
		t.Fatalf("focus %v, want the turns view", m.focus)
	}
	mustContain(t, screen(m), "loading turns")
	press(t, m, "enter")
	mustContain(t, screen(m), "the turns are still loading: enter opens one once they are listed")
}
