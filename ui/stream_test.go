package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/stream"
	"engram/ui/uikit"
)

// addEvents indexes n more events of the test world into r.
func addEvents(r *memReader, a *memArchive, from, n int) {
	for i := from; i < from+n; i++ {
		ev := testEvent(i, testBase)
		body, _ := ev.ArchiveJSON()
		a.put(ev.ObjectStorageKey, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
}

func TestStreamShowsNewestFirst(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	mustContain(t, screen(m), "10 docs", "● following", "step 0 of turn 3")
	if got := m.stream.Selected().EventID; got != "ev-000009" {
		t.Fatalf("selected %s, want the newest", got)
	}
}

func TestStreamFollowsTail(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	addEvents(r, a, 10, 3)
	send(t, m, stream.TickMsg{})
	if got := m.stream.Selected().EventID; got != "ev-000012" {
		t.Fatalf("selected %s after the tail, want the new newest ev-000012", got)
	}
	mustContain(t, screen(m), "13 docs", "● following")
	if m.stream.Rows().Len() != 13 {
		t.Fatalf("%d rows, want 13", m.stream.Rows().Len())
	}
}

func TestStreamPauseCountsThenResumeShows(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "space")
	before := screen(m)
	addEvents(r, a, 10, 4)
	send(t, m, stream.TickMsg{})
	s := screen(m)
	mustContain(t, s, "paused · 4 new")
	if rowsOf(s) != rowsOf(before) {
		t.Fatalf("the view moved while paused:\n%s\nwas\n%s", s, before)
	}
	mustNotContain(t, s, "ev-000013")
	press(t, m, "space")
	if got := m.stream.Selected().EventID; got != "ev-000013" {
		t.Fatalf("resumed on %s, want ev-000013", got)
	}
	mustContain(t, screen(m), "● following")
}

// rowsOf is the stream's rows: the lines between the header and the
// position line.
func rowsOf(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[2:len(lines)-3], "\n")
}

func TestStreamMovingDownPauses(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "j")
	if m.stream.Following() {
		t.Fatal("still following after moving off the newest row")
	}
	press(t, m, "k", "home")
	if !m.stream.Following() {
		t.Fatal("home does not follow again")
	}
}

// TestStreamWindowPagesAndEvicts scrolls far down a listing much longer
// than the buffer, and back: the window stays bounded, and every row is
// where the listing says it is.
func TestStreamWindowPagesAndEvicts(t *testing.T) {
	const n = 1000
	r, a := world(n, testBase)
	o := testOpts(t)
	m := newTestModel(t, testDeps(r, a), o, 80, 24)
	pos := 0 // rows from the newest
	check := func() {
		t.Helper()
		want := fmt.Sprintf("ev-%06d", n-1-pos)
		if got := m.stream.Selected().EventID; got != want {
			t.Fatalf("at row %d selected %s, want %s", pos, got, want)
		}
		if m.stream.Rows().Len() > o.BufferRows+o.PageSize {
			t.Fatalf("window holds %d rows, bound %d", m.stream.Rows().Len(), o.BufferRows)
		}
	}
	for pos < 900 {
		press(t, m, "pgdown")
		pos += m.stream.RowsShown()
		check()
	}
	if m.stream.Rows().Evictions() == 0 {
		t.Fatal("nothing was evicted from the top")
	}
	for pos > 0 {
		press(t, m, "pgup")
		pos = max(0, pos-m.stream.RowsShown())
		check()
	}
}

func TestStreamFilter(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "/")
	typeText(t, m, "agent:coder")
	press(t, m, "enter")
	if m.stream.Rows().Len() == 0 {
		t.Fatal("no rows match")
	}
	for _, d := range m.stream.Rows().All() {
		if d.AgentID != "coder" {
			t.Fatalf("row %s of agent %s under agent:coder", d.EventID, d.AgentID)
		}
	}
	mustContain(t, screen(m), "filter: agent:coder")
	// New documents are filtered too.
	addEvents(r, a, 30, 9)
	send(t, m, stream.TickMsg{})
	for _, d := range m.stream.Rows().All() {
		if d.AgentID != "coder" {
			t.Fatalf("tail let %s of agent %s in", d.EventID, d.AgentID)
		}
	}
	press(t, m, "esc")
	if m.stream.Filter() != "" || m.stream.Rows().Len() != 39 {
		t.Fatalf("esc left filter %q with %d rows", m.stream.Filter(), m.stream.Rows().Len())
	}
}

// TestStreamFilterTailRace: documents indexed between a poll's Tail and
// its filter check neither push the new matches out nor get in early.
func TestStreamFilterTailRace(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "/")
	typeText(t, m, "agent:coder")
	press(t, m, "enter")
	addEvents(r, a, 30, 9)
	r.mu.Lock()
	r.afterTail = func() { addEvents(r, a, 39, 30) }
	r.mu.Unlock()
	coders := func(upTo int) (n int) {
		for i := range upTo {
			if testEvent(i, testBase).Context.AgentID == "coder" {
				n++
			}
		}
		return n
	}
	send(t, m, stream.TickMsg{})
	if got, want := m.stream.Rows().Len(), coders(39); got != want {
		t.Fatalf("after the poll: %d rows, want the %d coder events of the first 39", got, want)
	}
	send(t, m, stream.TickMsg{})
	if got, want := m.stream.Rows().Len(), coders(69); got != want {
		t.Fatalf("after the next poll: %d rows, want %d", got, want)
	}
	for _, d := range m.stream.Rows().All() {
		if d.AgentID != "coder" {
			t.Fatalf("row %s of agent %s under agent:coder", d.EventID, d.AgentID)
		}
	}
}

// TestFilterSyntaxErrorShowsColumn: an expression the index refuses (not
// caught while typing) reopens the bar pointing at the column.
func TestFilterSyntaxErrorShowsColumn(t *testing.T) {
	r, a := world(5, testBase)
	d := testDeps(r, a)
	d.CheckFilter = func(string) error { return nil }
	m := newTestModel(t, d, testOpts(t), 80, 24)
	press(t, m, "/")
	typeText(t, m, "type:x bogus:1")
	press(t, m, "enter")
	s := screen(m)
	mustContain(t, s, "column 8", `unknown field "bogus"`)
	mustNotContain(t, s, "filter: type:x")
	lines := strings.Split(s, "\n")
	caret := lines[len(lines)-1]
	if i := strings.Index(caret, "^"); i != 2+7 {
		t.Fatalf("caret at %d, want under column 8 (cell %d):\n%s", i, 9, s)
	}
}

func TestFilterCheckedAsTyped(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "/")
	typeText(t, m, "agent:x nope:1")
	mustContain(t, screen(m), `column 9: unknown field "nope"`)
	press(t, m, "enter")
	if !m.filter.open {
		t.Fatal("enter applied an expression known to be wrong")
	}
}

func TestEmptyStore(t *testing.T) {
	m := newTestModel(t, testDeps(&memReader{}, &memArchive{}), testOpts(t), 80, 24)
	mustContain(t, screen(m), "Nothing here yet", "engram ingest FILE", "engram --follow FILE", "engram demo")
}

func TestStartupFailureIsFullScreen(t *testing.T) {
	d := testDeps(nil, nil)
	d.Reader, d.Archive = nil, nil
	d.Err = fmt.Errorf("open /nowhere/index.db: permission denied")
	d.Hint = "Run engram with --data pointing at a directory you can read."
	m := newTestModel(t, d, testOpts(t), 80, 24)
	mustContain(t, screen(m), "engram could not start", "permission denied", "What to do", "--data")
	_, cmd := m.Update(keyMsg("q"))
	if msg, _ := runCmd(cmd, 5*time.Second); msg != (tea.QuitMsg{}) {
		t.Fatalf("q gives %#v, want quit", msg)
	}
}

func TestStatusClearsOnNextKey(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	send(t, m, uikit.StatusMsg{Text: "something failed", Err: true})
	mustContain(t, screen(m), "something failed")
	press(t, m, "j")
	mustNotContain(t, screen(m), "something failed")
}

func TestResizeReachesHiddenViews(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	send(t, m, tea.WindowSizeMsg{Width: 160, Height: 48})
	dw, _ := m.detail.Size()
	_, th := m.turns.Size()
	pw, _ := m.pipeline.Size()
	_, rh := m.record.Size()
	if dw != 160 || th != 45 || pw != 160 || rh != 45 {
		t.Fatalf("hidden views not resized: detail %d, turns %d, pipeline %d, record %d", dw, th, pw, rh)
	}
	for i, l := range strings.Split(screen(m), "\n") {
		if w := uikit.Width(l); w != 160 {
			t.Fatalf("line %d is %d cells wide, want 160", i, w)
		}
	}
}

func TestNarrowWindows(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 40, 10)
	for _, keys := range [][]string{{}, {"enter"}, {"tab"}, {"tab"}, {"?"}} {
		press(t, m, keys...)
		for i, l := range strings.Split(screen(m), "\n") {
			if w := uikit.Width(l); w > 40 {
				t.Fatalf("after %v line %d is %d cells wide", keys, i, w)
			}
		}
	}
}

// The empty store's hints name the data directory in use, and the
// commands that would fill it carry it.
func TestEmptyStoreNamesTheDataDirectory(t *testing.T) {
	d := testDeps(&memReader{}, &memArchive{})
	d.DataDir = "/srv/engram-test"
	m := newTestModel(t, d, testOpts(t), 100, 30)
	mustContain(t, screen(m), "/srv/engram-test", "engram ingest --data /srv/engram-test FILE", "engram demo --data /srv/engram-test")
}

// One document is "1 doc".
func TestHeaderCountsOneDoc(t *testing.T) {
	r, a := world(1, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	mustContain(t, screen(m), "· 1 doc ·")
}

// The filter bar completes field names and the values of the rows shown
// with tab, and ↑/↓ go through the expressions applied before.
func TestFilterCompletionAndHistory(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "/")
	typeText(t, m, "ag")
	press(t, m, "tab")
	typeText(t, m, "pl")
	press(t, m, "tab")
	if got := m.filter.input.Value(); got != "agent:planner " {
		t.Fatalf("completed to %q", got)
	}
	press(t, m, "enter", "/")
	typeText(t, m, " ty")
	press(t, m, "tab")
	mustContain(t, screen(m), "type:")
	press(t, m, "tab") // several types: they are listed
	mustContain(t, screen(m), "agent_action", "tool_result", "user_input")
	typeText(t, m, "u")
	press(t, m, "tab", "enter", "/", "up")
	if got := m.filter.input.Value(); got != "agent:planner" {
		t.Fatalf("↑ shows %q, want the expression applied before", got)
	}
	press(t, m, "down")
	if got := m.filter.input.Value(); got != "agent:planner type:user_input" {
		t.Fatalf("↓ shows %q, want the last one applied", got)
	}
}

// A follow whose poll does not answer is drawn as stalled, with how long
// since the last answer; the next answer clears it.
func TestStreamHeaderShowsAStalledFollow(t *testing.T) {
	r, a := world(10, testBase)
	now := testNow
	deps := testDeps(r, a)
	deps.Now = func() time.Time { return now }
	m := newTestModel(t, deps, testOpts(t), 100, 24)
	mustContain(t, screen(m), "● following")
	_, poll := m.Update(stream.TickMsg{}) // a poll out, not answered yet
	late := m.stream.StallAfter() + 2*time.Second
	now = now.Add(late)
	m.Update(stream.WatchMsg{})
	s := screen(m)
	mustContain(t, s, "⚠ stalled · last poll "+late.String()+" ago")
	mustNotContain(t, s, "● following")
	settle(t, m, poll)
	mustContain(t, screen(m), "● following")
}

// A filter that matches nothing says how to clear it.
func TestStreamEmptyFilterSaysHowToClear(t *testing.T) {
	r, a := world(10, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 24)
	press(t, m, "/")
	typeText(t, m, "agent:nobody")
	press(t, m, "enter")
	mustContain(t, screen(m), "no rows match the filter: esc clears it")
	press(t, m, "esc")
	mustContain(t, screen(m), "row 1 of 10 loaded")
}
