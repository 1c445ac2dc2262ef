package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Found walking the inspector at 80 columns: the help of the stream lists
// g L with the other keys after g; a view's own esc is the global one,
// named once; the Recall help names + and -, < and > once each.
func TestHelpListsEveryKeyOnceAndGL(t *testing.T) {
	r, a := sessionWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 40)
	press(t, m, "?")
	mustContain(t, screen(m), "after y · after g", "session timeline")
	press(t, m, "x", "g", "L")
	if m.focus != viewSession {
		t.Fatalf("focus %v after g L", m.focus)
	}
	for _, id := range []viewID{viewSession, viewRecall} {
		m.setFocus(id)
		h := ansi.Strip(m.fullHelp())
		if n := strings.Count(h, "esc "); n != 1 {
			t.Fatalf("%s: esc named %d times:\n%s", m.table[id].name, n, h)
		}
		if id == viewRecall {
			mustContain(t, h, "+/- weight", "</> half-life")
			mustNotContain(t, h, "less weight", "shorter half-life", "to the results")
		}
	}
}

// The command line's hint names every command, :time too, in 80 columns.
func TestCmdLineHintNamesEveryCommand(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, ":")
	hint := ""
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, "tab completes") {
			hint = l
		}
	}
	if hint == "" || strings.Contains(hint, "…") {
		t.Fatalf("the hint is missing or cut: %q", hint)
	}
	for name := range commandHelp {
		if name != "quit" && !strings.Contains(hint, name) { // q names quit
			t.Fatalf("the hint %q does not name %s", hint, name)
		}
	}
}

// home and end say first and last where a list is not newest first: the
// session (oldest first), the detail, Recall, Similar, Compare; the
// session's ctrl+d moves as its help says.
func TestHomeEndSayFirstLastOutsideTheStream(t *testing.T) {
	r, a := sessionWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 40)
	mustContain(t, ansi.Strip(m.fullHelp()), "home     newest")
	press(t, m, "g", "L", "home")
	mustContain(t, ansi.Strip(m.fullHelp()), "first", "last", "ctrl+d/u")
	if !strings.Contains(screen(m), "turn 1 of 5") {
		t.Fatalf("home did not go to the first turn:\n%s", screen(m))
	}
	press(t, m, "ctrl+d")
	mustNotContain(t, screen(m), "turn 1 of 5")
	c, _, _ := recordModel(t, 6)
	press(t, c, "tab", "enter") // a turn's chain: its steps oldest first
	if !c.turns.ChainOpen() || homeNewest.MatchString(ansi.Strip(c.fullHelp())) {
		t.Fatalf("the chain's help: home and end say newest and oldest:\n%s", ansi.Strip(c.fullHelp()))
	}
	for _, id := range []viewID{viewSession, viewDetail, viewRecall, viewSimilar, viewCompare} {
		m.setFocus(id)
		if h := ansi.Strip(m.fullHelp()); homeNewest.MatchString(h) {
			t.Fatalf("%s: home and end say newest and oldest:\n%s", m.table[id].name, h)
		}
	}
}

var homeNewest = regexp.MustCompile(`home +newest|end/G +oldest`)
