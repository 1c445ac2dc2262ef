package ui

import (
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
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
