package ui

import (
	"fmt"
	"regexp"
	"strconv"
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

// TestFlowWhyNot: w on an event of the stream opens the Recall view with
// that event explained. With no prompt yet the prompt takes the keys and
// a line says the explanation waits for it; once typed, the panel gives
// the event's rank, its factors and the factor that kept it out. Esc
// goes back to the stream, and w on another event explains it against
// the prompt typed.
func TestFlowWhyNot(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 30)
	d := s.deps()
	d.Recall = &recall.Engine{Searcher: s.reader, Embedder: embed.Stub{}, Settings: recall.DefaultSettings(), Now: d.Now}
	tm, p := flow(t, d)
	waitScreen(t, p, "the stream's rows", has("30 docs", "Recall", "row 1 of 30 loaded"))
	// The stream's selected row, with no prompt yet.
	id := selectedEvent(t, p.screen())
	keys(tm, "w")
	waitScreen(t, p, "the Recall view waiting for a prompt", has("Recall ›", "why not "+id+"? explained here once a prompt is typed"))
	tm.Type("turn 7 logs")
	waitScreen(t, p, "the event explained", has("Recall › turn 7 logs", "why not "+id+"? ", "similarity ", "importance "))
	keys(tm, "esc", "esc") // the prompt left for the results, then the view for the stream
	waitScreen(t, p, "back in the stream", func(s string) bool { return p.focused() == viewStream && selectedLine(s) != "" })
	// An event far from the prompt, from its detail: against the prompt
	// typed at once, with what kept it out.
	keys(tm, ":")
	tm.Type("goto ev-000000")
	keys(tm, "enter")
	waitScreen(t, p, "the detail of the first event", has(`"eventId": "ev-000000"`))
	keys(tm, "w")
	waitScreen(t, p, "the event explained", has("Recall › turn 7 logs", "why not ev-000000? rank ", "outside the top 10",
		"text ", "similarity ", "importance ", "recency ", "gap to the 10th", "← kept it out", "the 10th: "))
	waitScreen(t, p, "its row selected", func(s string) bool { return strings.Contains(selectedLine(s), "step 0 of turn 0") })
	keys(tm, "esc")
	waitScreen(t, p, "back in the detail", func(s string) bool {
		return p.focused() == viewDetail && strings.Contains(s, `"eventId": "ev-000000"`)
	})
}

// selectedEvent is the id of the stream's selected row, read from its
// summary (testEvent's "step S of turn T" is event 3T+S).
func selectedEvent(t *testing.T, screen string) string {
	t.Helper()
	m := regexp.MustCompile(`step (\d) of turn (\d+)`).FindStringSubmatch(selectedLine(screen))
	if m == nil {
		t.Fatalf("no event selected:\n%s", screen)
	}
	step, _ := strconv.Atoi(m[1])
	turn, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("ev-%06d", 3*turn+step)
}
