package ui

import (
	"strings"
	"testing"

	"engram/ingest/embed"
	"engram/query/recall"
)

// TestFlowRecall: in a real program over the embedded index, Tab reaches
// the Recall view, a typed prompt brings its results once it rests (the
// debounce), each row with its factor bars, and enter on a result opens
// it in the detail.
func TestFlowRecall(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 30)
	d := s.deps()
	d.Recall = &recall.Engine{Searcher: s.reader, Embedder: embed.Stub{}, Settings: recall.DefaultSettings(), Now: d.Now}
	tm, p := flow(t, d)
	waitScreen(t, p, "the stream's rows", has("30 docs", "Recall"))
	// One tab at a time, each waited for by the view it draws: a frame
	// that changes for another reason must not send a second tab.
	for range numViews {
		before := p.focused()
		if before == viewRecall {
			break
		}
		keys(tm, "tab")
		waitScreen(t, p, "a view after tab", func(string) bool { return p.focused() != before })
	}
	waitScreen(t, p, "the Recall view", has("Recall ›", "Type a prompt"))
	tm.Type("turn 7 logs")
	waitScreen(t, p, "results with factor bars", has("Recall › turn 7 logs", "of 30 candidates", "txt", "sim", "█"))
	keys(tm, "esc") // from the prompt to the results
	waitScreen(t, p, "the first result selected", func(s string) bool {
		return selectedLine(strings.TrimLeft(s, " ")) != "" || strings.Contains(s, "›  1 ")
	})
	keys(tm, "enter")
	waitScreen(t, p, "the detail of a result", has("turn-0007"))
}
