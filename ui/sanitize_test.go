package ui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

// hostile is text that would clear the screen, move the cursor, write the
// clipboard (OSC 52), ring the bell and reverse what follows, if a
// terminal ever received it raw.
const hostile = "\x1b[2J\x1b[10;10Hgotcha\x1b]52;c;cm0gLXJmIH4=\x07\u202eevil\u009b31m"

var rawSequences = []string{"\x1b[2J", "\x1b[10;10H", "\x1b]", "\x07", "\u202e", "\u009b"}

// TestNoRawEscapesReachTheTerminal puts hostile text in every field the
// views draw (index, archive, turn, trace, filter, search, status) and
// checks the raw bytes appear in no frame.
func TestNoRawEscapesReachTheTerminal(t *testing.T) {
	r, a := world(3, testBase)
	ok := false
	lat := int64(5)
	doc := &model.IndexDoc{
		EventID: "evil" + hostile, Timestamp: testNow.Add(-time.Minute).Format(time.RFC3339), EventType: "tool_result" + hostile,
		SessionID: "s" + hostile, AgentID: "agent" + hostile, Summary: "summary" + hostile, TurnID: "turn" + hostile,
		TraceID: "trace" + hostile, Tool: "tool" + hostile, Success: &ok, LatencyMs: &lat, Tags: []string{hostile},
		ObjectStorageKey: "events/evil" + hostile, Structured: json.RawMessage(`{}`),
	}
	r.add(doc)
	archived, _ := json.Marshal(map[string]any{
		"eventId": doc.EventID, hostile: hostile,
		"action": map[string]any{"reasoning": "why" + hostile + "\nsecond line" + hostile},
		"result": map[string]any{"output": "out" + hostile},
	})
	a.put(doc.ObjectStorageKey, archived)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	m := newTestModel(t, d, testOpts(t), 100, 30)

	frames := []string{m.View().Content}
	snap := func(keys ...string) {
		press(t, m, keys...)
		frames = append(frames, m.View().Content)
	}
	snap("enter") // detail: index document and archive
	snap("s")     // side by side
	snap("/")     // search
	send(t, m, tea.PasteMsg{Content: hostile})
	snap()                  // the search line with the hostile term, highlighted
	snap("enter")           // the search closed, its term still shown
	snap("esc")             // back to the stream
	snap("tab", "enter")    // the turn and its chain
	snap("esc", "esc", "/") // the filter bar with a hostile paste
	send(t, m, tea.PasteMsg{Content: hostile})
	snap()
	snap("enter") // applied: the position lines show the filter
	snap("tab")   // the turns under it
	snap("tab", "tab", "tab", "esc")
	send(t, m, uikit.StatusMsg{Text: "failed: " + hostile, Err: true})
	frames = append(frames, m.View().Content)
	send(t, m, uikit.PipeMsg{Run: 9, Trace: &ingest.Trace{Seq: 1, EventID: hostile, Src: ingest.Source{File: hostile, Line: 1},
		Outcome: ingest.OutcomeFailed, Err: errors.New(hostile)}})
	snap("tab", "tab", "tab")
	snap("R")
	send(t, m, tea.PasteMsg{Content: hostile})
	frames = append(frames, m.View().Content)

	for i, f := range frames {
		for _, raw := range rawSequences {
			if strings.Contains(f, raw) {
				t.Fatalf("frame %d holds the raw sequence %q:\n%q", i, raw, f)
			}
		}
	}
	// And what was escaped is still there to read.
	mustContain(t, ansi.Strip(frames[0]), `summary\x1b[2J`)
}

// TestWideCharactersAligned: CJK and emoji count two cells; rows stay
// exactly as wide as the window.
func TestWideCharactersAligned(t *testing.T) {
	r, a := world(2, testBase)
	ev := testEvent(2, testBase)
	ev.Input.Text = "日本語の説明 🚀🚀 ümlaut und 中文 " + strings.Repeat("字", 80)
	ev.Context.AgentID = "エージェント"
	r.add(model.NewIndexDoc(ev, 0))
	for _, w := range []int{80, 117, 160} {
		m := newTestModel(t, testDeps(r, a), testOpts(t), w, 24)
		for i, l := range strings.Split(screen(m), "\n") {
			if got := uikit.Width(l); got != w {
				t.Fatalf("at %d columns line %d is %d cells: %q", w, i, got, l)
			}
		}
		mustContain(t, screen(m), "日本語の説明 🚀") // at 80 the summary has 16 cells
	}
}

// A summary's line breaks show as ↵ in the lists, not as \x0a.
func TestSummaryLineBreaksInLists(t *testing.T) {
	r, a := world(0, testBase)
	ev := testEvent(0, testBase)
	ev.Input.Text = "line one\nline two"
	r.add(model.NewIndexDoc(ev, 0))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	mustContain(t, screen(m), "line one↵line two")
	mustNotContain(t, screen(m), `\x0a`)
}
