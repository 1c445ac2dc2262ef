package ui

import (
	"image/color"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestThemeFromBackground(t *testing.T) {
	r, a := world(3, testBase)
	o := testOpts(t)
	o.Theme = ""
	m := New(testDeps(r, a), o)
	m.c.Manual = true
	msg, _ := runCmd(m.Init(), 5*time.Second)
	found := false
	for _, c := range msg.(tea.BatchMsg) {
		if c != nil && strings.Contains(typeName(c()), "backgroundcolor") {
			found = true
		}
	}
	if !found {
		t.Fatal("Init does not ask the terminal for its background")
	}
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.c.Styles.Palette.Name != "light" {
		t.Fatalf("white background gives %s", m.c.Styles.Palette.Name)
	}
	m.Update(tea.BackgroundColorMsg{Color: color.Black})
	if m.c.Styles.Palette.Name != "dark" {
		t.Fatalf("black background gives %s", m.c.Styles.Palette.Name)
	}
}

func TestThemeFlagWinsOverBackground(t *testing.T) {
	r, a := world(3, testBase)
	o := testOpts(t)
	o.Theme = "high-contrast"
	m := newTestModel(t, testDeps(r, a), o, 80, 24)
	send(t, m, tea.BackgroundColorMsg{Color: color.White})
	if m.c.Styles.Palette.Name != "high-contrast" {
		t.Fatalf("theme %s", m.c.Styles.Palette.Name)
	}
	o.Theme = "solarized"
	m = newTestModel(t, testDeps(r, a), o, 80, 24)
	mustContain(t, screen(m), `no theme "solarized"`)
}

// TestNoColor: NO_COLOR draws no colour at all; the selection is still
// visible (reverse video).
func TestNoColor(t *testing.T) {
	r, a := world(3, testBase)
	o := testOpts(t)
	o.NoColor = true
	m := newTestModel(t, testDeps(r, a), o, 80, 24)
	out := m.View().Content
	for _, sgr := range []string{"38;", "48;", "[3", "[9"} {
		if strings.Contains(out, "\x1b"+sgr) {
			t.Fatalf("colour %q drawn under NO_COLOR", sgr)
		}
	}
	if !strings.Contains(out, "\x1b[7m") {
		t.Fatal("the selection is invisible without colour")
	}
}

func typeName(v any) string {
	if v == nil {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(fmtType(v), "tea."), "*"))
}

// Under NO_COLOR the current search match stands out from the others
// (reverse video), as it does in colour.
func TestNoColorCurrentMatchStandsOut(t *testing.T) {
	r, a := world(9, testBase)
	o := testOpts(t)
	o.Theme, o.NoColor = "", true
	m := newTestModel(t, testDeps(r, a), o, 100, 30)
	press(t, m, "down", "enter", "/")
	typeText(t, m, "s")
	press(t, m, "enter")
	raw := m.View().Content
	cur := regexp.MustCompile(`\x1b\[([0-9]*;)*7(;[0-9]*)*m`) // SGR 7: reverse
	if n := len(cur.FindAllString(raw, -1)); n < 1 {
		t.Fatalf("no match in reverse video among the %d s on screen", strings.Count(ansi.Strip(raw), "s"))
	}
}
