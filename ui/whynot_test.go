package ui

import (
	"context"
	"strings"
	"testing"

	"engram/query/recall"
)

// memRecall recalls from a memReader: every document is a candidate, its
// BM25 the number of the prompt's words its summary holds.
type memRecall struct{ r *memReader }

func (s memRecall) Recall(_ context.Context, q recall.Request) (recall.Answer, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	var out []recall.Candidate
	for _, d := range s.r.docs {
		c := recall.Candidate{Doc: d}
		for _, w := range strings.Fields(q.Text) {
			if strings.Contains(d.Summary, w) {
				c.BM25++
			}
		}
		out = append(out, c)
	}
	return recall.Answer{Candidates: out, Note: "memory"}, nil
}

// w works wherever an event is selected: it opens the Recall view with
// that event explained against the prompt, and esc goes back to the view
// it was pressed in, the panel closed. The help lists it there, and only
// where an index can recall.
func TestWhyNotFromEveryEventView(t *testing.T) {
	r, a := sessionWorld()
	d := testDeps(r, a)
	d.Recall = &recall.Engine{Searcher: memRecall{r}, Settings: recall.DefaultSettings(), Now: d.Now}
	m := newTestModel(t, d, testOpts(t), 120, 40)
	// A prompt first, so each w explains at once.
	press(t, m, "shift+tab")
	if m.focus != viewRecall {
		t.Fatalf("shift+tab: %v, not the Recall view", m.focus)
	}
	typeText(t, m, "turn 3")
	press(t, m, "enter", "esc")
	for _, c := range []struct {
		name string
		keys []string
		view viewID
	}{
		{"stream", []string{"down"}, viewStream},
		{"detail", []string{"enter"}, viewDetail},
		{"chain", []string{"esc", "tab", "enter", "down"}, viewTurns},
		{"similar", []string{"esc", "esc", "enter", "S", "down"}, viewSimilar},
		{"compare", []string{"esc", "esc", "m", "down", "="}, viewCompare},
		{"session", []string{"esc", "g", "L"}, viewSession},
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
		mustContain(t, screen(m), "why not? (recall)")
		press(t, m, "x", "w")
		if m.focus != viewRecall || m.recall.Explained() != ev {
			t.Fatalf("%s: w went to %v explaining %v", c.name, m.focus, m.recall.Explained())
		}
		mustContain(t, screen(m), "why not "+ev.EventID+"? ")
		press(t, m, "esc")
		if m.focus != c.view || m.recall.Explained() != nil {
			t.Fatalf("%s: esc went to %v, the panel on %v", c.name, m.focus, m.recall.Explained())
		}
	}
	// Without an index that can recall, w says so and the help is silent.
	m = newTestModel(t, testDeps(sessionWorld()), testOpts(t), 120, 40)
	press(t, m, "?")
	mustNotContain(t, screen(m), "why not?")
	press(t, m, "x", "w")
	mustContain(t, screen(m), "why not? needs an index that can recall")
}
