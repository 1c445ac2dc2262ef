package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/ui/uikit"
)

func openDetail(t *testing.T, n int, keys ...string) (*Model, *memReader, *memArchive) {
	t.Helper()
	r, a := world(n, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, keys...)
	press(t, m, "enter")
	if m.focus != viewDetail {
		t.Fatalf("enter did not open the detail")
	}
	return m, r, a
}

func TestDetailShowsIndexThenArchive(t *testing.T) {
	r, a := world(10, testBase)
	a.block = true
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "down", "enter")
	s := screen(m)
	// The index document is there at once; the archive is on its way.
	mustContain(t, s, `"index": {`, `"event_id": "ev-000008"`, "fetching archive")
	if !m.busy() {
		t.Fatal("a fetch is running but nothing spins")
	}
	a.mu.Lock()
	a.block = false
	a.mu.Unlock()
	press(t, m, "r")
	mustContain(t, screen(m), "✓ archive events/2026/05/08/ev-000008.json", `"archive": {`)
}

// TestDetailSlowFetchNeverBlocks: a fetch that never answers leaves the UI
// working, and moving to another event cancels it.
func TestDetailSlowFetchNeverBlocks(t *testing.T) {
	r, a := world(10, testBase)
	a.block = true
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	start := time.Now()
	press(t, m, "enter", "down", "]", "]")
	if time.Since(start) > 2*time.Second {
		t.Fatalf("keys took %v while a fetch hung", time.Since(start))
	}
	if m.detail.Doc().EventID != "ev-000007" {
		t.Fatalf("detail on %s, want ev-000007", m.detail.Doc().EventID)
	}
	press(t, m, "esc")
	cancelled := func() int {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.cancelled
	}
	// A fetch counts itself once it has seen its context end, which may
	// come after the key that cancelled it has been handled.
	waitFor(t, func() bool { return cancelled() >= 3 })
	if n := cancelled(); n != 3 {
		t.Fatalf("%d fetches cancelled, want the 3 left behind", n)
	}
}

func TestDetailFetchErrorInPlace(t *testing.T) {
	r, a := world(3, testBase)
	a.fail = errors.New("connection refused")
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "enter")
	mustContain(t, screen(m), "✗ archive: connection refused", "r refetch")
}

func TestMissingArchiveMarksRow(t *testing.T) {
	r, a := world(3, testBase)
	delete(a.objs, model.ArchivePrefix(testBase)+"ev-000002.json")
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "enter")
	mustContain(t, screen(m), "is missing")
	press(t, m, "esc")
	row := strings.Split(screen(m), "\n")[2]
	if !strings.HasPrefix(row, "›!") {
		t.Fatalf("the row of a missing archive is not marked: %q", row)
	}
}

func TestDetailFoldsKeptBetweenEvents(t *testing.T) {
	m, _, _ := openDetail(t, 10, "down")
	// Put the cursor on "action" of the archive and fold it.
	for j := m.detail.Panes()[0]; ; press(t, m, "down") {
		if path, _ := j.Line(j.Cursor()); path == "archive.action" {
			break
		}
		if j.Cursor() == j.Len()-1 {
			t.Fatal("no line of archive.action")
		}
	}
	press(t, m, "space")
	mustContain(t, screen(m), `"action": {…} 3 keys`)
	press(t, m, "]")
	if m.detail.Doc().EventID != "ev-000007" {
		t.Fatalf("] moved to %s, want ev-000007", m.detail.Doc().EventID)
	}
	mustContain(t, screen(m), `"action": {…}`)
	press(t, m, "E")
	if m.detail.Folded("archive.action") {
		t.Fatal("E left the action folded")
	}
}

func TestDetailSearch(t *testing.T) {
	m, _, _ := openDetail(t, 10, "down")
	press(t, m, "/")
	typeText(t, m, "disk")
	press(t, m, "enter")
	s := screen(m)
	mustContain(t, s, "search disk", "1/1")
	if cur, _ := m.detail.Panes()[0].Line(m.detail.Panes()[0].Cursor()); cur != "archive.action.reasoning" {
		t.Fatalf("cursor on %s, want the reasoning", cur)
	}
	press(t, m, "/")
	typeText(t, m, "ev-00000")
	press(t, m, "enter")
	j := m.detail.Panes()[0]
	if _, n := j.Match(); n != 4 {
		t.Fatalf("%d matches of ev-00000, want 4 (two ids, two keys)", n)
	}
	at, _ := j.Match()
	press(t, m, "n")
	if mi, _ := j.Match(); mi != (at+1)%4 {
		t.Fatalf("n went from match %d to %d", at, mi)
	}
	press(t, m, "N")
	if mi, _ := j.Match(); mi != at {
		t.Fatalf("N went to match %d, want %d", mi, at)
	}
}

func TestDetailSideBySideMarksArchiveOnly(t *testing.T) {
	m, _, _ := openDetail(t, 10, "down")
	press(t, m, "s")
	s := screen(m)
	mustContain(t, s, `"index": {`, `"archive": {`, "+ only in the archive")
	var marked []string
	for i := range m.detail.Panes()[1].Len() {
		if path, mark := m.detail.Panes()[1].Line(i); mark {
			marked = append(marked, path)
		}
	}
	joined := strings.Join(marked, " ")
	for _, want := range []string{"archive.action.parameters", "archive.action.reasoning", "archive.result.output"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s is not marked as archive-only (marked: %s)", want, joined)
		}
	}
	for _, held := range []string{"archive.eventId", "archive.input.text", "archive.action.tool"} {
		if strings.Contains(joined+" ", held+" ") {
			t.Errorf("%s is marked but the index holds it", held)
		}
	}
}

func TestDetailWrapsLongStrings(t *testing.T) {
	r, a := world(1, testBase)
	ev := testEvent(1, testBase)
	ev.EventID = "long"
	ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
	ev.Action.Reasoning = strings.Repeat("because the cache directory is large and stale, ", 20) + "\n\nso clean it: 日本語のテキストも折り返す。"
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "enter")
	lines := 0
	for i := range m.detail.Panes()[0].Len() {
		if path, _ := m.detail.Panes()[0].Line(i); path == "archive.action.reasoning" {
			lines++
		}
	}
	if lines < 10 {
		t.Fatalf("the reasoning takes %d lines; it is not wrapped", lines)
	}
	press(t, m, "/")
	typeText(t, m, "折り返す")
	press(t, m, "enter")
	for i, l := range strings.Split(screen(m), "\n") {
		if w := uikit.Width(l); w > 80 {
			t.Fatalf("line %d is %d cells: %q", i, w, l)
		}
	}
	mustContain(t, screen(m), "日本語のテキストも折り返す")
}

// The detail carries no state from one event to the next: the search is
// the event's own (and counts in side by side), and another event opens
// at its top.
func TestDetailStartsAfreshPerEvent(t *testing.T) {
	r, a := world(9, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	press(t, m, "down", "enter", "/")
	typeText(t, m, "disk")
	press(t, m, "enter", "s")
	mustNotContain(t, screen(m), "no match")
	mustContain(t, screen(m), "search disk")
	press(t, m, "s", "down", "down", "down", "down", "down", "]")
	mustNotContain(t, screen(m), "search disk")
	if c := m.detail.Panes()[0].Cursor(); c != 0 {
		t.Fatalf("] opened the next event on line %d, want its top", c)
	}
	press(t, m, "down", "down", "down", "esc", "down", "enter")
	if c := m.detail.Panes()[0].Cursor(); c != 0 {
		t.Fatalf("another event opened on line %d, want its top", c)
	}
}

// The archive line keeps the size when the key is too long for the width.
func TestArchiveLineKeepsTheSize(t *testing.T) {
	r, a := world(0, testBase)
	ev := testEvent(0, testBase)
	ev.EventID = "01a23196-a29d-72ec-a92a-7eb244106c80"
	ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "enter")
	mustContain(t, screen(m), "✓ archived · ", " bytes")
}

// Side by side, the legend of + is part of the archive line's width: a
// key that leaves room for the size but not the legend gives way, so the
// legend is never cut.
func TestSideBySideLegendIsNeverCut(t *testing.T) {
	r, a := world(0, testBase)
	ev := testEvent(0, testBase)
	ev.EventID = "agent-a-000300-obs"
	ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "enter")
	mustContain(t, screen(m), "✓ archive "+ev.ObjectStorageKey)
	press(t, m, "s")
	mustContain(t, screen(m), "✓ archived · ", " bytes · + only in the archive")
}

// An empty search prompt counts nothing yet: it does not say "no match"
// before a word is typed.
func TestDetailSearchPromptEmptySaysNoMatchOnlyForAWord(t *testing.T) {
	m, _, _ := openDetail(t, 10, "down")
	press(t, m, "/")
	mustNotContain(t, screen(m), "no match")
	typeText(t, m, "zzzz")
	mustContain(t, screen(m), "no match")
}

// 1-9 on an event that names no other one says so rather than nothing:
// the help lists them in every detail.
func TestDetailLinkKeyWithoutLinks(t *testing.T) {
	m, _, _ := openDetail(t, 10, "down")
	press(t, m, "1")
	mustContain(t, screen(m), "no link 1: this event names no other event")
}
