package ui

import (
	"strings"
	"testing"
)

// TestFlowOrderOldestAndTime: o lists the stream (and the turns) by event
// time, said on the position line; G reaches the oldest event of the whole
// index beyond the loaded rows; :time shows the events at or before a
// moment; new events still appear, placed by their time; o again goes
// back to indexing order.
func TestFlowOrderOldestAndTime(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 120, 60) // the newer events indexed first
	s.ingest(t, 0, 120)
	tm, p := flow(t, s.deps())
	sel := func(want string) func(string) bool {
		return func(scr string) bool { return strings.Contains(selectedLine(scr), want) }
	}
	// The pipeline indexes a batch's events in no set order; the newest
	// event came in the first batch, and is not on top.
	waitScreen(t, p, "by indexing time", has("by indexing time", "180 docs"))
	if strings.Contains(selectedLine(p.screen()), "turn 59:") {
		t.Fatalf("the newest event is on top by indexing time:\n%s", p.screen())
	}
	keys(tm, "o")
	waitScreen(t, p, "the newest event on top, by event time", func(scr string) bool {
		return has("by event time")(scr) && sel("step 2 of turn 59")(scr)
	})

	// G: the oldest event of the index, not of the 50 rows loaded.
	keys(tm, "G")
	waitScreen(t, p, "the oldest event selected", func(scr string) bool {
		return sel("step 0 of turn 0:")(scr) && has("newer above")(scr)
	})
	keys(tm, "home")
	waitScreen(t, p, "back to the newest", sel("step 2 of turn 59"))

	// :time: what is at or before 10:01 (event 60 is at 10:01:00).
	keys(tm, ":")
	tm.Type("time 2026-05-08T10:01")
	keys(tm, "enter")
	waitScreen(t, p, "the moment", func(scr string) bool {
		return sel("step 0 of turn 20:")(scr) && has("by event time", "newer above")(scr)
	})
	keys(tm, "up")
	waitScreen(t, p, "up at a jump's first row says how back", has("home goes back to the newest"))
	keys(tm, ":")
	tm.Type("time tomorrow")
	keys(tm, "enter")
	waitScreen(t, p, "a bad moment said", has("is not a moment"))

	// Following by event time, new events still appear where their time
	// puts them: on top, being the newest.
	keys(tm, "home")
	waitScreen(t, p, "following the newest", sel("step 2 of turn 59"))
	s.ingest(t, 180, 3)
	waitScreen(t, p, "a new event placed by time", sel("step 2 of turn 60"))
	// Paused, they are counted; home places them.
	keys(tm, "space")
	waitScreen(t, p, "paused", has("‖ paused"))
	s.ingest(t, 183, 3)
	waitScreen(t, p, "counted", has("3 new (home places them by time)"))
	keys(tm, "home")
	waitScreen(t, p, "placed", func(scr string) bool {
		return sel("step 2 of turn 61")(scr) && !strings.Contains(scr, " new (home")
	})

	// The turns list in the same order.
	keys(tm, "tab")
	waitScreen(t, p, "the turns by event time", has("by event time", "about"))
	keys(tm, "o")
	waitScreen(t, p, "the turns by indexing time", has("by indexing time"))
	keys(tm, "shift+tab")
	waitScreen(t, p, "the stream by indexing time", has("by indexing time"))
}
