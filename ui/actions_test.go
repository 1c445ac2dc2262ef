package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"engram/ui/stream"
)

// clipboardOf runs cmd and returns what it writes to the clipboard.
func clipboardOf(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		msg, _ := runCmd(queue[0], 0)
		queue = queue[1:]
		if b, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, b...)
			continue
		}
		if v := reflect.ValueOf(msg); v.IsValid() && strings.Contains(v.Type().String(), "setClipboard") {
			return v.String()
		}
	}
	t.Fatal("no clipboard write")
	return ""
}

func TestYank(t *testing.T) {
	r, a := world(5, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "y")
	mustContain(t, screen(m), "i event id", "k archive key", "j JSON")
	_, cmd := m.Update(keyMsg("i"))
	if got := clipboardOf(t, cmd); got != "ev-000004" {
		t.Fatalf("yanked %q", got)
	}
	m.Update(keyMsg("y"))
	_, cmd = m.Update(keyMsg("k"))
	if got := clipboardOf(t, cmd); got != "events/2026/05/08/ev-000004.json" {
		t.Fatalf("yanked %q", got)
	}
	press(t, m, "enter")
	m.Update(keyMsg("y"))
	_, cmd = m.Update(keyMsg("j"))
	var ev map[string]any
	if err := json.Unmarshal([]byte(clipboardOf(t, cmd)), &ev); err != nil || ev["eventId"] != "ev-000004" {
		t.Fatalf("yanked JSON is not the archived event: %v %v", err, ev)
	}
}

func TestExport(t *testing.T) {
	r, a := world(5, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	o := testOpts(t)
	m := newTestModel(t, d, o, 80, 24)
	press(t, m, "down", "e")
	path := filepath.Join(o.ExportDir, "engram-ev-000003.json")
	mustContain(t, screen(m), "exported")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Index   map[string]any `json:"index"`
		Archive map[string]any `json:"archive"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Index["event_id"] != "ev-000003" || out.Archive["eventId"] != "ev-000003" {
		t.Fatalf("export holds %s (%v)", b, err)
	}
}

func TestJumpKeys(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "down") // ev-000010, turn-0003
	press(t, m, "g", "t")
	if got := m.stream.Selected().EventID; got != "ev-000009" {
		t.Fatalf("g t went to %s, want ev-000009 of the same turn", got)
	}
	press(t, m, "g", "T")
	if got := m.stream.Selected().EventID; got != "ev-000010" {
		t.Fatalf("g T went to %s", got)
	}
	press(t, m, "g", "r")
	mustContain(t, screen(m), "no other row shares it")
	press(t, m, "enter", "g", "s")
	if m.focus != viewDetail || m.detail.Doc().EventID != "ev-000009" {
		t.Fatalf("g s in the detail shows %s", m.detail.Doc().EventID)
	}
	press(t, m, "g", "g")
	if got := m.stream.Selected().EventID; got != "ev-000011" || m.detail.Doc().EventID != "ev-000011" {
		t.Fatalf("g g went to %s", got)
	}
}

func TestMouseWheelScrolls(t *testing.T) {
	r, a := world(20, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	send(t, m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.stream.Selection() != 3 {
		t.Fatalf("wheel moved to %d", m.stream.Selection())
	}
	send(t, m, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.stream.Selection() != 0 {
		t.Fatalf("wheel moved back to %d", m.stream.Selection())
	}
}

func TestHelpShowsOnlyWorkingKeys(t *testing.T) {
	m := newTestModel(t, testDeps(&memReader{}, &memArchive{}), testOpts(t), 80, 24)
	foot := strings.Split(screen(m), "\n")[23]
	mustNotContain(t, foot, "enter", "yank")
	mustContain(t, foot, "filter", "help")
	press(t, m, "?")
	mustContain(t, screen(m), "Keys · Stream", "page down")
}

func TestFollowFile(t *testing.T) {
	r, a := world(0, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	o := testOpts(t)
	file := filepath.Join(t.TempDir(), "events.jsonl")
	lines := []string{}
	for i := range 2 {
		b, _ := testEvent(i, testBase).ArchiveJSON()
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Follow = []string{file}
	m := newTestModel(t, d, o, 100, 30)
	send(t, m, followTickMsg{})
	if n, _ := r.Count(m.c.Ctx); n != 2 {
		t.Fatalf("%d docs after following, want 2", n)
	}
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	b, _ := testEvent(2, testBase).ArchiveJSON()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"eventId\": \"bad\"}\n{\"partial\":"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	send(t, m, followTickMsg{})
	if n, _ := r.Count(m.c.Ctx); n != 3 {
		t.Fatalf("%d docs after the append, want 3", n)
	}
	mustContain(t, screen(m), "1 of 2 lines not ingested")
	send(t, m, stream.TickMsg{})
	press(t, m, "tab", "tab", "tab") // Tab skips the Record form
	s := screen(m)
	mustContain(t, s, "rejected", "events.jsonl:4")
	if !strings.Contains(strings.Split(s, "\n")[1], "rejected") {
		t.Fatalf("the failure is not first:\n%s", s)
	}
}

// traced is a world of n events where the events of ids share trace.
func traced(n int, trace string, ids ...int) (*memReader, *memArchive) {
	r, a := world(n, testBase)
	for _, i := range ids {
		r.docs[i].TraceID = trace
	}
	return r, a
}

// selectDown presses down until id is selected.
func selectDown(t *testing.T, m *Model, id, key string) {
	t.Helper()
	for range 1000 {
		if m.stream.Selected().EventID == id {
			return
		}
		press(t, m, key)
	}
	t.Fatalf("never reached %s", id)
}

// TestJumpSeeksBeyondLoadedRows: a jump whose row is not loaded pages on
// until it is (older, then newer), and gives up, leaving the selection
// where it was, when that would evict the row it started from.
func TestJumpSeeksBeyondLoadedRows(t *testing.T) {
	r, a := traced(300, "far", 299, 50, 120, 285)
	o := testOpts(t)
	o.PageSize, o.BufferRows = 20, 300
	m := newTestModel(t, testDeps(r, a), o, 80, 24)
	if m.stream.Rows().Index("ev-000050") >= 0 {
		t.Fatal("the target is loaded already: nothing to seek")
	}
	press(t, m, "g", "r") // from ev-000299 to ev-000285, loaded
	press(t, m, "g", "r")
	if got := m.stream.Selected().EventID; got != "ev-000120" {
		t.Fatalf("g r went to %s, want ev-000120", got)
	}
	press(t, m, "g", "r")
	if got := m.stream.Selected().EventID; got != "ev-000050" {
		t.Fatalf("g r went to %s, want ev-000050 (%s)", got, m.status)
	}

	// Newer: ev-000285 evicted above the window.
	o.BufferRows = 200
	m = newTestModel(t, testDeps(r, a), o, 80, 24)
	selectDown(t, m, "ev-000100", "down")
	selectDown(t, m, "ev-000120", "up")
	if m.stream.Rows().Index("ev-000285") >= 0 {
		t.Fatalf("ev-000285 is still loaded: nothing to seek (%d rows from %s, %d above)", m.stream.Rows().Len(), m.stream.Rows().Row(0).EventID, m.stream.Rows().Evictions())
	}
	press(t, m, "g", "R")
	if got := m.stream.Selected().EventID; got != "ev-000285" {
		t.Fatalf("g R went to %s, want ev-000285 (%s)", got, m.status)
	}

	// A window too small to reach the target keeps the selection.
	o.BufferRows = 100
	m = newTestModel(t, testDeps(r, a), o, 80, 24)
	press(t, m, "down", "g", "r") // ev-000298 shares no trace
	mustContain(t, screen(m), "no other row shares it")
	press(t, m, "up", "g", "r")
	if got := m.stream.Selected().EventID; got != "ev-000285" {
		t.Fatalf("at ev-000285 expected, got %s", got)
	}
	press(t, m, "g", "r") // ev-000120 lies beyond a window of 100 rows
	if got := m.stream.Selected().EventID; got != "ev-000285" {
		t.Fatalf("a failed seek moved the selection to %s", got)
	}
	mustContain(t, screen(m), "no row shares it within")
}

// y j says which JSON it copied; e names the file in full and never
// writes over an earlier export.
func TestCopyAndExportSayWhat(t *testing.T) {
	r, a := world(5, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	o := testOpts(t)
	o.ExportDir = "." // relative, as the default (the working directory) is
	t.Chdir(t.TempDir())
	m := newTestModel(t, d, o, 120, 24)
	press(t, m, "y", "j")
	mustContain(t, screen(m), "copied the index document")
	press(t, m, "enter", "y", "j")
	mustContain(t, screen(m), "copied the archived event")
	press(t, m, "e")
	wd, _ := os.Getwd()
	first := filepath.Join(wd, "engram-ev-000004.json")
	mustContain(t, joined(screen(m)), "exported "+first)
	if err := os.WriteFile(first, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	press(t, m, "e")
	if b, _ := os.ReadFile(first); string(b) != "mine" {
		t.Fatal("a second e wrote over the first export")
	}
	mustContain(t, joined(screen(m)), "exported "+filepath.Join(wd, "engram-ev-000004-2.json"))
}
