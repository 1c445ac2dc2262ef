package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"engram/model"
	"engram/query/recall"
)

// sessionWorld is session s-0: four turns a second apart, then, half an
// hour later, a fifth.
func sessionWorld() (*memReader, *memArchive) {
	r, a := world(12, testBase)
	for n := 12; n < 15; n++ {
		ev := testEvent(n, testBase.Add(30*time.Minute))
		body, _ := ev.ArchiveJSON()
		a.put(ev.ObjectStorageKey, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
	return r, a
}

// g L on the newest event lays out its session, its turn selected.
func TestSessionGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r, a := sessionWorld()
			m := newTestModel(t, testDeps(r, a), testOpts(t), size[0], size[1])
			press(t, m, "g", "L")
			if m.focus != viewSession {
				t.Fatalf("focus %v after g L", m.focus)
			}
			golden.RequireEqual(t, []byte(ansi.Strip(m.session.View())))
		})
	}
}

func TestSessionSteps(t *testing.T) {
	r, a := sessionWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 40)
	press(t, m, "g", "L")
	mustContain(t, screen(m), "Session s-0", "5 turns", "┄┄ 30m01s idle ┄┄", "turn 5 of 5", "steps of turn-0004")
	press(t, m, "up")
	mustContain(t, screen(m), "turn 4 of 5", "steps of turn-0003", "ev-000011")
	// enter opens the selected turn's first event; Esc comes back.
	press(t, m, "enter")
	if m.focus != viewDetail || m.detail.Doc().EventID != "ev-000009" {
		t.Fatalf("enter: focus %v", m.focus)
	}
	press(t, m, "esc")
	if m.focus != viewSession {
		t.Fatalf("esc from the detail went to %v", m.focus)
	}
	press(t, m, "esc")
	if m.focus != viewStream {
		t.Fatalf("esc from the session went to %v", m.focus)
	}
}

// g L opens the session of the event wherever one is selected: a turn's
// chain, a neighbour, a recall result, the compared event and the detail
// opened from them; that event's turn is the one selected, and esc comes
// back. Outside the stream g offers only g g (the view's top) and g L, and
// the help says so.
func TestSessionFromEveryEventView(t *testing.T) {
	r, a := sessionWorld()
	d := testDeps(r, a)
	d.Recall = &recall.Engine{Searcher: memRecall{r}, Settings: recall.DefaultSettings(), Now: d.Now}
	m := newTestModel(t, d, testOpts(t), 120, 40)
	press(t, m, "shift+tab")
	typeText(t, m, "turn 3")
	press(t, m, "enter")
	for _, c := range []struct {
		name string
		keys []string
		view viewID
	}{
		{"recall", []string{"down"}, viewRecall},
		{"chain", []string{"esc", "tab", "enter", "down"}, viewTurns},
		{"similar", []string{"esc", "esc", "enter", "S", "down"}, viewSimilar},
		{"similar's detail", []string{"enter"}, viewDetail},
		{"compare", []string{"esc", "esc", "esc", "m", "down", "="}, viewCompare},
	} {
		press(t, m, c.keys...)
		if m.focus != c.view {
			t.Fatalf("%s: %v after %v", c.name, m.focus, c.keys)
		}
		ev := m.current()
		if ev == nil {
			t.Fatalf("%s: no event selected", c.name)
		}
		press(t, m, "?")
		s := screen(m)
		mustContain(t, s, "after g", "session timeline")
		mustNotContain(t, s, "next/prev same turn")
		press(t, m, "x", "g", "t")
		mustContain(t, screen(m), "g t: not a key here")
		press(t, m, "g", "L")
		if m.focus != viewSession {
			t.Fatalf("%s: g L went to %v", c.name, m.focus)
		}
		if got := m.session.Current(); got == nil || got.TurnKey() != ev.TurnKey() {
			t.Fatalf("%s: the session's selected turn is %v, want %s's %s", c.name, got, ev.EventID, ev.TurnKey())
		}
		mustContain(t, screen(m), "Session "+ev.SessionID)
		press(t, m, "esc")
		if m.focus != c.view || m.current() != ev {
			t.Fatalf("%s: esc went to %v on %v", c.name, m.focus, m.current())
		}
	}
}

// g g outside the stream is the view's top; the turns list, with no
// event under the cursor, keeps the bare g.
func TestGoTopOutsideTheStream(t *testing.T) {
	r, a := sessionWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 40)
	press(t, m, "g", "L", "up", "up")
	if m.session.Current().TurnKey() == "turn-0004" {
		t.Fatal("up did not leave the last turn")
	}
	press(t, m, "g")
	mustContain(t, screen(m), "top", "session timeline")
	press(t, m, "g")
	if got := m.session.Current().TurnKey(); got != "turn-0000" {
		t.Fatalf("g g in the session: turn %s, want the first", got)
	}
}
