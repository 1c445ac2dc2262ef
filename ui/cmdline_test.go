package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// command types ":" and a line, then enter.
func command(t *testing.T, m *Model, line string) tea.Cmd {
	t.Helper()
	press(t, m, ":")
	typeText(t, m, line)
	_, cmd := m.Update(keyMsg("enter"))
	return cmd
}

// The ":" command line does what has no key: goto, turn, theme, q.
func TestCommandLine(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, ":")
	mustContain(t, screen(m), "commands: export, goto")
	press(t, m, "esc")
	settle(t, m, command(t, m, "goto ev-000003"))
	if m.focus != viewDetail || m.detail.Doc().EventID != "ev-000003" {
		t.Fatalf(":goto: focus %v on %v", m.focus, m.detail.Doc())
	}
	settle(t, m, command(t, m, "goto nope"))
	mustContain(t, screen(m), "goto nope: ")
	settle(t, m, command(t, m, "turn turn-0001"))
	if steps, open := m.turns.Chain(); m.focus != viewTurns || !open || len(steps) != 3 {
		t.Fatalf(":turn: focus %v, chain open %v with %d steps", m.focus, open, len(steps))
	}
	settle(t, m, command(t, m, "theme light"))
	if m.c.Styles.Palette.Name != "light" {
		t.Fatalf(":theme light: palette %s", m.c.Styles.Palette.Name)
	}
	press(t, m, ":")
	typeText(t, m, "th")
	press(t, m, "tab")
	mustContain(t, screen(m), ": theme", "theme NAME:")
	press(t, m, "esc")
	settle(t, m, command(t, m, "bogus"))
	mustContain(t, screen(m), ":bogus: no such command")
	if msg, _ := runCmd(command(t, m, "q"), 0); fmtType(msg) != "tea.QuitMsg" {
		t.Fatalf(":q: %s", fmtType(msg))
	}
}

// :search finds rows without filtering them: n and N go to the next and
// previous rows that hold the term, which is highlighted.
func TestSearchWithinTheStream(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	settle(t, m, command(t, m, "search turn 1:"))
	if d := m.stream.Selected(); d == nil || d.EventID != "ev-000005" {
		t.Fatalf(":search selects %v, want the newest row of turn 1", d)
	}
	if m.stream.Rows().Len() != 12 {
		t.Fatal(":search filtered the rows")
	}
	mustContain(t, screen(m), `find "turn 1:"`)
	press(t, m, "n")
	if d := m.stream.Selected(); d.EventID != "ev-000004" {
		t.Fatalf("n went to %s", d.EventID)
	}
	press(t, m, "N")
	if d := m.stream.Selected(); d.EventID != "ev-000005" {
		t.Fatalf("N went to %s", d.EventID)
	}
	if raw := m.View().Content; !strings.Contains(raw, m.c.Styles.Match.Render("turn 1:")) {
		t.Fatal("the term is not highlighted in the rows")
	}
	settle(t, m, command(t, m, "search nothing holds this"))
	mustContain(t, screen(m), "no row loaded holds")
}
