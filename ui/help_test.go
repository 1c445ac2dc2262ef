package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// lastLine is the footer.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return lines[len(lines)-1]
}

// Help and footers lay out to the width: columns wrap, the least
// important hints go first, never the way to help and out.
func TestHelpAndFootersFitTheWidth(t *testing.T) {
	r, a := world(12, testBase)
	for _, w := range []int{60, 80} {
		d := testDeps(r, a)
		d.Recorder = recorderFor(r, a) // the write keys widen the help
		m := newTestModel(t, d, testOpts(t), w, 30)
		for _, keys := range [][]string{{}, {"enter"}, {"esc", "tab"}} {
			press(t, m, keys...)
			foot := lastLine(screen(m))
			if !strings.Contains(foot, "? help") || !strings.Contains(foot, "q quit") || strings.Contains(foot, "…") {
				t.Fatalf("%d columns, view %v: footer %q lacks help or quit, or is cut", w, m.focus, foot)
			}
		}
		press(t, m, "esc", "?")
		s := screen(m)
		mustContain(t, s, "enter", "open", "space", "pause/follow", "↑/k", "pgdn", "end/G")
		for i, l := range strings.Split(s, "\n") {
			if n := uikit.Width(l); n > w {
				t.Fatalf("%d columns: help line %d is %d wide: %q", w, i, n, l)
			}
		}
		send(t, m, tea.KeyPressMsg{Code: 'x', Text: "x"})
	}
}

// A key works where the help shows it, or the help does not show it
// there; a prefix followed by a key it does not know says so.
func TestKeysShownWorkWhereShown(t *testing.T) {
	m, _, _ := recordModel(t, 9)
	press(t, m, "tab", "?") // the turns list: no event under the cursor
	mustNotContain(t, screen(m), "yank", "export", "duplicate", "go to")
	press(t, m, "x", "tab", "tab", "?") // the pipeline
	mustNotContain(t, screen(m), "filter", "yank", "export", "y l")
	press(t, m, "x", "/")
	if m.filter.open {
		t.Fatal("/ in the pipeline opened the stream's filter")
	}
	press(t, m, "esc", "y", "x")
	mustContain(t, screen(m), "y x: not a key here")
	press(t, m, "g", "x")
	mustContain(t, screen(m), "g x: not a key here")
}

// The pipeline's empty text says what is true of this inspector: the
// demo's agent ingests elsewhere, a followed file is already followed,
// read-only ingests nothing.
func TestPipelineEmptyTextFitsTheSession(t *testing.T) {
	cases := []struct {
		name       string
		opts       func(*uikit.Options)
		want, nots []string
	}{
		{"demo", func(o *uikit.Options) { o.Demo = true }, []string{"simulated agent", "Stream"}, []string{"No ingestion has run"}},
		{"follow", func(o *uikit.Options) { o.Follow = []string{"/tmp/agent.jsonl"} }, []string{"/tmp/agent.jsonl"}, []string{"--follow FILE"}},
		{"readonly", func(o *uikit.Options) { o.ReadOnly = true }, []string{"read-only"}, []string{"(R)", "--follow"}},
	}
	for _, c := range cases {
		r, a := world(3, testBase)
		d := testDeps(r, a)
		d.Recorder = recorderFor(r, a)
		o := testOpts(t)
		c.opts(&o)
		m := newTestModel(t, d, o, 120, 30)
		press(t, m, "shift+tab", "shift+tab") // the Overview, then the pipeline
		s := screen(m)
		mustContain(t, s, c.want...)
		mustNotContain(t, s, c.nots...)
	}
}

// Esc after y or g takes the prefix back, without a word.
func TestEscCancelsAPrefix(t *testing.T) {
	m, _, _ := recordModel(t, 3)
	for _, prefix := range []string{"y", "g"} {
		press(t, m, prefix, "esc")
		if m.chord != "" || m.status != "" {
			t.Fatalf("%s esc: chord %q, status %q", prefix, m.chord, m.status)
		}
	}
}

// The help of a turn's chain lists the chain's keys, not the list's.
func TestChainHelpIsTheChains(t *testing.T) {
	m, _, _ := recordModel(t, 6)
	press(t, m, "tab", "enter", "?")
	s := screen(m)
	mustContain(t, s, "event detail", "after y")
	mustContain(t, s, "after g", "L session timeline") // g L only: the other jumps are the stream's
	mustNotContain(t, s, "pause/follow", "same turn")
}

// The full help names each key once.
func TestHelpNamesAKeyOnce(t *testing.T) {
	m, _, _ := recordModel(t, 6)
	for _, keys := range [][]string{{"?"}, {"x", "tab", "?"}} {
		press(t, m, keys...)
		if s := screen(m); strings.Count(s, "filter") != 1 || strings.Count(s, "esc ") > 1 {
			t.Fatalf("a key named twice:\n%s", s)
		}
	}
}

// The help taller than the window scrolls: its last line is reached with
// end, a key that does not scroll closes it.
func TestHelpScrollsWhenTallerThanTheBody(t *testing.T) {
	r, a := world(6, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	m := newTestModel(t, d, testOpts(t), 80, 14)
	press(t, m, "?")
	last := "The Pipeline view shows the trace id"
	s := screen(m)
	mustContain(t, s, "Keys · Stream", "scroll")
	mustNotContain(t, s, last)
	press(t, m, "end")
	mustContain(t, screen(m), last)
	mustNotContain(t, screen(m), "Keys · Stream")
	press(t, m, "home")
	mustContain(t, screen(m), "Keys · Stream")
	press(t, m, "pgdown", "pgdown", "pgdown", "pgdown")
	mustContain(t, screen(m), last)
	if !m.showHelp {
		t.Fatal("scrolling closed the help")
	}
	press(t, m, "x")
	if m.showHelp {
		t.Fatal("x did not close the help")
	}
}

// Every view id has its entry in the table, named and built.
func TestEveryViewIsRegistered(t *testing.T) {
	r, a := world(3, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	seen := map[string]bool{}
	for id, e := range m.table {
		if e.name == "" || e.v == nil || seen[e.name] {
			t.Fatalf("view %d: name %q, view %v (a name twice?)", id, e.name, e.v)
		}
		seen[e.name] = true
	}
	if ids := m.views(); len(ids) == 0 || ids[0] != viewStream {
		t.Fatalf("tabs %v: the stream first", ids)
	}
}

// The help's word on y l wraps to a narrow window rather than being cut
// at its edge.
func TestHelpTraceNoteWrapsToTheWidth(t *testing.T) {
	r, a := world(6, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 60, 20)
	press(t, m, "?", "end")
	s := screen(m)
	mustContain(t, s, "{spanId}", "else the trace id.", "The Pipeline view shows the trace id of each")
}
