package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/query/recall"
)

// A write key in a read-only inspector says why it does nothing, and the
// header says read-only.
func TestReadOnlyKeysSayWhy(t *testing.T) {
	r, a := world(3, testBase)
	d := testDeps(r, a)
	d.ReadOnlyWhy = "the data directory /mnt/ro is read-only"
	m := newTestModel(t, d, testOpts(t), 100, 24)
	mustContain(t, strings.SplitN(screen(m), "\n", 2)[0], "read-only")
	for _, k := range []string{"R", "e", "D"} {
		settle(t, m, m.onKey(keyMsg(k)))
		mustContain(t, screen(m), k+": ", "is off: read-only, the data directory /mnt/ro is read-only")
	}
	o := testOpts(t)
	o.ReadOnly = true
	m = newTestModel(t, testDeps(r, a), o, 100, 24)
	settle(t, m, m.onKey(keyMsg("R")))
	mustContain(t, screen(m), "recording is off: read-only, engram was started with --readonly")
}

// :export PATH writes the event selected when : was pressed to PATH, and
// never over a file that is there.
func TestExportCommandToPath(t *testing.T) {
	m, _, _ := recordModel(t, 5)
	press(t, m, "down") // ev-000003
	path := filepath.Join(t.TempDir(), "picked.json")
	press(t, m, ":")
	m.stream.SelectID("ev-000001") // the tail moves the selection meanwhile
	typeText(t, m, "export "+path)
	_, cmd := m.Update(keyMsg("enter"))
	settle(t, m, cmd)
	mustContain(t, screen(m), "exported "+path)
	var out struct {
		Index map[string]any `json:"index"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &out) != nil || out.Index["event_id"] != "ev-000003" {
		t.Fatalf("%s holds %s (%v), want ev-000003", path, b, err)
	}
	settle(t, m, command(t, m, "export "+path))
	mustContain(t, screen(m), "export: ", "exists")
	if again, _ := os.ReadFile(path); string(again) != string(b) {
		t.Fatal("a second export replaced the file")
	}
	dir := t.TempDir()
	settle(t, m, command(t, m, "export "+dir)) // now on ev-000001
	if _, err := os.Stat(filepath.Join(dir, "engram-ev-000001.json")); err != nil {
		t.Fatalf(":export DIR: %v", err)
	}
}

// Tab on the command line lists the themes and cycles through them;
// shift+tab goes back.
func TestCommandLineCompletesThemes(t *testing.T) {
	r, a := world(3, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, ":")
	typeText(t, m, "theme ")
	press(t, m, "tab")
	mustContain(t, screen(m), "dark", "light")
	press(t, m, "tab")
	first := m.cmdLine.input.Value()
	press(t, m, "tab")
	second := m.cmdLine.input.Value()
	press(t, m, "shift+tab")
	if !strings.HasPrefix(first, "theme ") || first == second || m.cmdLine.input.Value() != first {
		t.Fatalf("tab gave %q then %q, shift+tab %q", first, second, m.cmdLine.input.Value())
	}
	mustContain(t, screen(m), "["+strings.TrimPrefix(first, "theme ")+"]")
}

// type: completes every type the language takes, not only those of the
// rows loaded; success: its two values; tab cycles a list.
func TestFilterCompletesEveryValue(t *testing.T) {
	r, a := world(3, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 24)
	press(t, m, "/")
	typeText(t, m, "type:o")
	press(t, m, "tab")
	mustContain(t, screen(m), "observation", "outcome")
	press(t, m, "tab")
	if got := m.filter.input.Value(); got != "type:observation" {
		t.Fatalf("tab cycled to %q", got)
	}
	press(t, m, "tab")
	if got := m.filter.input.Value(); got != "type:outcome" {
		t.Fatalf("tab cycled to %q", got)
	}
	press(t, m, "esc", "/")
	typeText(t, m, "success:f")
	press(t, m, "tab")
	if got := m.filter.input.Value(); got != "success:false " {
		t.Fatalf("success:f completed to %q", got)
	}
	press(t, m, "esc", "/")
	typeText(t, m, "tool:")
	press(t, m, "tab")
	if m.filter.input.Value() == "tool:" && m.filter.comp.cands == nil {
		t.Fatal("tool: completed nothing")
	}
}

// The Recall prompt's footer says how to leave it: esc to the results
// (or out, when there are none yet), tab to the next view.
func TestRecallPromptFooterSaysHowToLeave(t *testing.T) {
	r, a := world(3, testBase)
	d := testDeps(r, a)
	d.Recall = &recall.Engine{Searcher: memRecall{r}, Settings: recall.DefaultSettings(), Now: d.Now}
	for _, w := range []int{80, 120} {
		m := newTestModel(t, d, testOpts(t), w, 24)
		press(t, m, "shift+tab")
		if m.focus != viewRecall || !m.recall.Typing() {
			t.Fatalf("shift+tab: %v, typing %v", m.focus, m.recall.Typing())
		}
		mustContain(t, lastLine(screen(m)), "enter to the results", "esc leave the prompt", "tab views")
	}
}

// Where g is not a prefix the help names what it does there, plainly:
// the top of a list or a document, the Overview's first bucket; the
// second keys of g show only where g takes one.
func TestHelpNamesWhatGDoes(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 40)
	for _, c := range []struct {
		keys []string
		view viewID
		want string
	}{
		{[]string{"tab"}, viewTurns, "g top"},
		// On an event g is a prefix: g g (top) and g L (its session) only.
		{[]string{"enter"}, viewTurns, "L session timeline"}, // a turn's chain
		{[]string{"enter"}, viewDetail, "L session timeline"},
		{[]string{"esc", "esc", "esc", "shift+tab"}, viewOverview, "g first bucket"},
	} {
		press(t, m, c.keys...)
		if m.focus != c.view {
			t.Fatalf("%v: focus %v, want %v", c.keys, m.focus, c.view)
		}
		press(t, m, "?")
		s := screen(m)
		press(t, m, "x")
		mustContain(t, s, c.want)
		mustNotContain(t, s, "second key", "same session")
		if named, onEvent := strings.Contains(s, "after g"), m.current() != nil; named != onEvent {
			t.Fatalf("%v: the help names the keys after g: %v, on an event: %v", c.keys, named, onEvent)
		}
	}
	press(t, m, "tab", "?") // the stream: g is a prefix
	mustContain(t, screen(m), "g go to…", "after g", "s/S next/prev same session")
}
