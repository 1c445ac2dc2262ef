package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"engram/model"
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
