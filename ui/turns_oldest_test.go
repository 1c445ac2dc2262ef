package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// TestFlowTurnsOldest: G in the Turns view reaches the oldest turn of the
// listing, beyond the page loaded, in either order and under a filter; g
// comes back to the newest.
func TestFlowTurnsOldest(t *testing.T) {
	s := openReal(t)
	// turn-0099 indexed first: the oldest by indexing time, the newest by
	// event time. 100 turns, twice the page.
	s.ingest(t, 297, 3)
	s.ingest(t, 0, 297)
	tm, p := flow(t, s.deps())
	sel := func(want string) func(string) bool {
		return func(scr string) bool { return strings.Contains(selectedLine(scr), want) }
	}
	waitScreen(t, p, "the stream", has("300 docs"))
	keys(tm, "tab")
	waitScreen(t, p, "the turns", has("by indexing time", "turn 1 of 50 loaded"))

	keys(tm, "G")
	waitScreen(t, p, "the oldest turn by indexing time", func(scr string) bool {
		return sel("turn-0099")(scr) && has("turn 50 of 50 loaded · newer above")(scr)
	})
	keys(tm, "up")
	waitScreen(t, p, "the row above, within the page", has("turn 49 of 50 loaded"))

	keys(tm, "o")
	waitScreen(t, p, "the newest turn by event time", func(scr string) bool {
		return sel("turn-0099")(scr) && has("by event time", "turn 1 of 50 loaded")(scr) && !has("newer above")(scr)
	})
	keys(tm, "G")
	waitScreen(t, p, "the oldest turn by event time", func(scr string) bool {
		return sel("turn-0000")(scr) && has("newer above")(scr)
	})
	keys(tm, "k")
	waitScreen(t, p, "up at the first row of the oldest page", sel("turn-0001"))
	keys(tm, "g")
	waitScreen(t, p, "g: back to the newest", func(scr string) bool {
		return sel("turn-0099")(scr) && has("turn 1 of 50 loaded")(scr) && !has("newer above")(scr)
	})

	// Filtered: the oldest turn with a match (turn-0000 is the planner's).
	keys(tm, "/")
	tm.Type("-agent:planner")
	keys(tm, "enter")
	waitScreen(t, p, "filtered", func(scr string) bool {
		return has("filter: -agent:planner")(scr) && sel("turn-0098")(scr)
	})
	keys(tm, "G")
	waitScreen(t, p, "the oldest matching turn", func(scr string) bool {
		return sel("turn-0001")(scr) && has("newer above")(scr)
	})
	keys(tm, "g")
	waitScreen(t, p, "back to the newest matching turn", sel("turn-0098"))
}

// TestTurnsOldestGolden: the Turns view after G, by event time, four
// turns a page of ten: the oldest turn selected, newer above.
func TestTurnsOldestGolden(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 30)
	o := testOpts(t)
	o.PageSize = 4
	m := newTestModel(t, s.deps(), o, 80, 24)
	press(t, m, "tab", "o", "G")
	if !strings.Contains(selectedLine(ansi.Strip(m.View().Content)), "turn-0000") {
		t.Fatalf("G did not reach the oldest turn:\n%s", ansi.Strip(m.View().Content))
	}
	golden.RequireEqual(t, []byte(ansi.Strip(m.View().Content)))
}
