package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/ui/stream"
	"engram/ui/uikit"
)

// runSync runs cmd and every batch it holds synchronously, returning the
// messages (commands that block longer than wait are abandoned).
func runSync(cmd tea.Cmd, wait time.Duration) []tea.Msg {
	if cmd == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(wait):
		return nil
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runSync(c, wait)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// deliver runs cmd and hands its messages to the model (one level only).
func deliver(m *Model, cmd tea.Cmd) {
	for _, msg := range runSync(cmd, 200*time.Millisecond) {
		m.Update(msg)
	}
}

// a statusMsg that comes through the pipeline channel (Outage /
// Recovered) does not re-arm the listener: every later stage is lost and,
// once the 1024-slot channel fills, the pipelines block forever.
func TestPipelineListenerSurvivesOutageNotice(t *testing.T) {
	r, a := world(3, testBase)
	m := New(testDeps(r, a), testOpts(t)) // not manual: the real listener
	t.Cleanup(m.cancel)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	obs := uikit.Observer{Ctx: m.c.Ctx, Ch: m.events, Run: 7}
	obs.Outage(ingest.Outage{})
	obs.Stage(ingest.StageEvent{Seq: 1, StageRecord: ingest.StageRecord{Stage: ingest.StageReceive, Status: ingest.StatusRunning}})
	// One program loop: run the listener, deliver, run what Update returns.
	cmds := []tea.Cmd{m.listen()}
	for i := 0; i < 10 && len(cmds) > 0; i++ {
		var next []tea.Cmd
		for _, c := range cmds {
			for _, msg := range runSync(c, 300*time.Millisecond) {
				_, cmd := m.Update(msg)
				next = append(next, cmd)
			}
		}
		cmds = next
	}
	if m.pipeline.Runs() == 0 {
		t.Fatalf("the stage sent after an outage notice never reached the pipeline view (%d messages stuck in the channel)", len(m.events))
	}
}

// moving to the end while a filtered head load is on its way sends
// loadOlder with the old window's cursor; the head lands first, the older
// answer no longer matches buf.next and is dropped without clearing
// loadingOlder: no older row ever loads again, the spinner never stops.
func TestOlderRowsLoadAfterEndDuringFilterLoad(t *testing.T) {
	r, a := world(1000, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	m.filter.applied = "agent:planner"
	headCmd := m.applyFilter()
	_, endCmd := m.Update(keyMsg("end")) // before the head lands
	deliver(m, headCmd)
	deliver(m, endCmd)
	// Now scroll to the end of the filtered rows: more should load.
	for range 5 {
		press(t, m, "end")
	}
	if n := m.stream.Rows().Len(); n <= 50 {
		t.Fatalf("stuck at %d rows; loadingOlder=%v buf.end=%v\n%s", n, m.stream.LoadingOlder(), m.stream.Rows().End(), screen(m))
	}
}

// the same in the turns view (Home reloads, End before it lands).
func TestTurnsOlderRowsLoadAfterEndDuringReload(t *testing.T) {
	r, a := world(3000, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "tab")
	for range 10 {
		press(t, m, "end")
	}
	if m.turns.Rows().AtHead() {
		t.Fatal("setup: want the turns window scrolled past its head")
	}
	_, homeCmd := m.Update(keyMsg("home")) // reload
	_, endCmd := m.Update(keyMsg("end"))
	deliver(m, homeCmd)
	deliver(m, endCmd)
	for range 5 {
		press(t, m, "end")
	}
	if n := m.turns.Rows().Len(); n <= 50 {
		t.Fatalf("turns stuck at %d rows, loadingOlder=%v", n, m.turns.LoadingOlder())
	}
}

// Regression: y, then the stream empties (a filter matching nothing lands), then
// i: yank dereferences a nil document and the program panics.
func TestYankAfterRowsVanish(t *testing.T) {
	r, a := world(20, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	m.filter.applied = "agent:nobody"
	headCmd := m.applyFilter()
	press(t, m, "y")
	deliver(m, headCmd)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("panic: %v", p)
		}
	}()
	m.Update(keyMsg("i"))
}

// Regression: leaving the detail while its archive fetch runs cancels it; the
// cancelled answer still carries the current req and is stored as the
// error, so coming back shows "context canceled" instead of refetching.
func TestDetailCancelledFetchRefetchedOnReturn(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	a.mu.Lock()
	a.block = true
	a.mu.Unlock()
	press(t, m, "enter") // fetch parked
	press(t, m, "tab")   // leave: cancelled, the answer lands
	a.mu.Lock()
	a.block = false
	a.mu.Unlock()
	press(t, m, "shift+tab") // back to the detail
	if m.focus != viewDetail {
		t.Fatalf("focus %v", m.focus)
	}
	s := screen(m)
	if strings.Contains(s, "context canceled") || m.detail.Archived() == nil {
		t.Fatalf("came back to a cancelled fetch shown as the archive's error:\n%s", s)
	}
}

// Regression: an index document jsontree.Parse refuses (structured nested deeper than
// 200) leaves the previous event's index tree on screen under the new title.
func TestDetailNeverShowsPreviousIndexTree(t *testing.T) {
	r, a := world(3, testBase)
	deep := strings.Repeat("[", 250) + strings.Repeat("]", 250)
	r.mu.Lock()
	r.docs[1].Structured = json.RawMessage(deep) // ev-000001, below the newest
	r.mu.Unlock()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 140, 60)
	press(t, m, "enter") // ev-000002
	press(t, m, "]")     // ev-000001
	if m.detail.Doc().EventID != "ev-000001" {
		t.Fatalf("on %s", m.detail.Doc().EventID)
	}
	s := screen(m)
	if strings.Contains(s, `"event_id": "ev-000002"`) {
		t.Fatalf("detail of ev-000001 shows ev-000002's index document:\n%s", s)
	}
}

// ownTraces is n documents a second apart, ids formatted with idFormat,
// each with a trace of its own ("t-N").
func ownTraces(n int, idFormat string) (*memReader, *memArchive) {
	r := &memReader{}
	for i := range n {
		r.docs = append(r.docs, &model.IndexDoc{EventID: fmt.Sprintf(idFormat, i), EventType: model.TypeUserInput,
			Timestamp: testBase.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano), TraceID: fmt.Sprintf("t-%d", i)})
	}
	return r, &memArchive{}
}

// Regression: g r while an older page is already loading: the jump reports "no
// other row shares it that way", then the seek goes on and selects a row
// that does, the false message still in the status line.
func TestSeekStartedDuringLoadFindsWithoutFalseStatus(t *testing.T) {
	r, a := ownTraces(400, "d-%03d")
	// newest is d-399 at row 0; row 49 is d-350; give d-250 (row 149) its trace.
	r.docs[250].TraceID = "t-350"
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	_, endCmd := m.Update(keyMsg("end")) // row 49, an older page on its way
	if m.stream.Selected().EventID != "d-350" || !m.stream.LoadingOlder() {
		t.Fatalf("setup: on %s loadingOlder=%v", m.stream.Selected().EventID, m.stream.LoadingOlder())
	}
	m.Update(keyMsg("g"))
	_, jumpCmd := m.Update(keyMsg("r"))
	settle(t, m, endCmd, jumpCmd)
	sel := m.stream.Selected().EventID
	s := screen(m)
	if sel != "d-250" || strings.Contains(s, "no other row shares it that way") {
		t.Fatalf("selected %s (same trace) yet the status says:\n%s", sel, s)
	}
}

// Regression: a backward seek started while a head load is on its way is never
// continued nor ended: "looking further…" stays until the next key.
func TestSeekEndsWithHeadLoad(t *testing.T) {
	r, a := ownTraces(1000, "d-%04d")
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	for range 8 {
		press(t, m, "end")
	}
	if m.stream.Rows().AtHead() {
		t.Fatal("setup: want rows evicted above")
	}
	m.filter.applied = "type:" + model.TypeUserInput
	headCmd := m.applyFilter()
	m.Update(keyMsg("g"))
	_, jumpCmd := m.Update(keyMsg("R"))
	deliver(m, headCmd)
	settle(t, m, jumpCmd)
	if m.stream.Seeking() {
		t.Fatalf("the seek outlived the head load:\n%s", screen(m))
	}
}

// Regression: ] in the detail stops at the last loaded stream row although more
// rows exist below (step never pages in).
func TestDetailNextPagesPastLoadedRows(t *testing.T) {
	r, a := world(500, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 30)
	press(t, m, "enter")
	for range 60 {
		press(t, m, "]")
	}
	if got := m.detail.Doc().EventID; got != "ev-000439" {
		t.Fatalf("] stopped on %s, the 50th row, with %d rows loaded and more below (end=%v): %q",
			got, m.stream.Rows().Len(), m.stream.Rows().End(), m.status)
	}
}

// Regression: a filter the index refuses (it parsed) drops what arrived while
// paused: the rows never show, the "N new" count is lost.
func TestRefusedFilterKeepsPendingRows(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "space")
	addEvents(r, a, 10, 4)
	send(t, m, stream.TickMsg{})
	mustContain(t, screen(m), "paused · 4 new")
	m.filter.applied = "tool:shell" // parses; the fake index refuses it
	settle(t, m, m.applyFilter())
	press(t, m, "esc")   // close the reopened bar
	press(t, m, "space") // resume
	if m.stream.Rows().Index("ev-000013") < 0 {
		t.Fatalf("the 4 documents that came while paused are gone:\n%s", screen(m))
	}
}

// Regression: g t in the detail jumps from the stream's selection, which the tail
// has moved (Enter does not pause the follow), not from the event shown.
func TestDetailJumpStartsFromShownEvent(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "enter") // detail on ev-000011 (turn-0003), still following
	addEvents(r, a, 12, 3)
	send(t, m, stream.TickMsg{})
	if m.detail.Doc().EventID != "ev-000011" {
		t.Fatalf("setup: detail on %s", m.detail.Doc().EventID)
	}
	press(t, m, "g", "t")
	if got := m.detail.Doc(); got.TurnKey() != "turn-0003" {
		t.Fatalf("g t from ev-000011 (turn-0003) opened %s of %s", got.EventID, got.TurnKey())
	}
}

// Regression: y j on an event whose archive was cut at ArchiveLimit copies the
// cut bytes as "the JSON".
func TestYankCutArchiveCopiesIndexJSON(t *testing.T) {
	r, a := world(2, testBase)
	o := testOpts(t)
	o.ArchiveLimit = 100
	m := newTestModel(t, testDeps(r, a), o, 100, 30)
	press(t, m, "enter", "y")
	_, cmd := m.Update(keyMsg("j"))
	for _, msg := range runSync(cmd, time.Second) {
		if s, ok := msg.(uikit.StatusMsg); ok {
			t.Logf("status: %s", s.Text)
		}
	}
	if m.detail.Archived() == nil || !m.detail.Archived().Truncated {
		t.Fatal("setup: want the archive cut at ArchiveLimit")
	}
	if text, _ := m.eventJSON(m.detail.Doc()); !json.Valid([]byte(text)) {
		t.Fatalf("copies %d bytes of a cut archive as the JSON: %q", len(text), text)
	}
}

// no filter involved: End starts an older load, Home goes back to the
// head, the tail prepends and trims the bottom (buf.next changes), the
// older answer is dropped and loadingOlder stays set for good.
func TestOlderRowsLoadAfterTailTrim(t *testing.T) {
	r, a := world(1000, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "end", "end", "end")
	if m.stream.Rows().Len() != 200 || !m.stream.Rows().AtHead() {
		t.Fatalf("setup: %d rows, atHead %v", m.stream.Rows().Len(), m.stream.Rows().AtHead())
	}
	_, endCmd := m.Update(keyMsg("end"))
	m.Update(keyMsg("home"))
	addEvents(r, a, 1000, 5)
	_, tailCmd := m.Update(stream.TickMsg{})
	deliver(m, tailCmd)
	deliver(m, endCmd)
	for range 5 {
		press(t, m, "end")
	}
	if !m.stream.Rows().End() && m.stream.LoadingOlder() && m.stream.Rows().Len() <= 200 {
		t.Fatalf("stuck: %d rows, loadingOlder %v, more below but nothing loads", m.stream.Rows().Len(), m.stream.LoadingOlder())
	}
}
